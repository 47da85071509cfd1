// Part of task_upsert and history_import: the task t (of its row) linked to
// its full-text terms (row.props.terms) instead of its old ones, the Term
// nodes made when new.
CALL (t) {
  MATCH (t)-[old:MENTIONS]->(:Term)
  DELETE old
}
CALL (t, row) {
  UNWIND coalesce(row.props.terms, []) AS name
  MERGE (term:Term {name: name})
    ON CREATE SET term.id = name
  MERGE (t)-[:MENTIONS]->(term)
}
