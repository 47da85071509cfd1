// Part of files_fill and files_upsert: the file f linked to the Term `name`,
// the Term made when new.
MERGE (term:Term {name: name})
  ON CREATE SET term.id = name
MERGE (f)-[:MENTIONS]->(term)
