// Link the tasks an import just created to their full-text terms ($terms:
// [{name, tasks}], each term once, in name order, with the ids of the new
// tasks having it), the Term nodes made when new: what task_upsert links,
// one MERGE per term instead of one per task and term.
UNWIND $terms AS row
MERGE (term:Term {name: row.name})
  ON CREATE SET term.id = row.name
WITH term, row
UNWIND row.tasks AS id
MATCH (t:Task {id: id})
CREATE (t)-[:MENTIONS]->(term)
