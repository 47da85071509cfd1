// Context-map entries: create, or overwrite component, notes and terms.
UNWIND $rows AS row
MERGE (f:File {path: row.path})
SET f = row
WITH f, row
CALL (f) {
  MATCH (f)-[old:MENTIONS]->(:Term)
  DELETE old
}
CALL (f, row) {
  UNWIND row.terms AS name
  MERGE (term:Term {name: name})
    ON CREATE SET term.id = name
  MERGE (f)-[:MENTIONS]->(term)
}
