// Create or replace tasks ($rows: [{props, tags, deps}]): properties replaced
// whole (created_at and the text's vectors kept: their embedding_hash and
// query_hash tell whether they are still of this text), tags and full-text terms re-linked,
// dependency edges added. `doc` (the task_text index's document) is its terms
// when finished, else absent; set in the same SET so that an unchanged
// document is not rewritten in the index. A finished task also has the
// `Completed` label (counted by the count store: the history's n).
UNWIND $rows AS row
MERGE (t:Task {id: row.props.id})
WITH t, row, row.props AS props, t.created_at AS old_created, t.embedding AS old_vector,
     t.embedding_hash AS old_hash, t.query_vector AS old_query, t.query_hash AS old_query_hash
SET t = props {.*, doc: CASE WHEN props.status = 'completed' THEN coalesce(props.terms, []) END}
SET t.created_at = coalesce(old_created, row.props.created_at),
    t.embedding = old_vector, t.embedding_hash = old_hash, t.query_vector = old_query, t.query_hash = old_query_hash
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [1] ELSE [] END | SET t:Completed)
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [] ELSE [1] END | REMOVE t:Completed)
WITH t, row
CALL (t) {
  MATCH (t)-[old:TAGGED]->(:Tag)
  DELETE old
}
CALL (t, row) {
  UNWIND row.tags AS name
  MERGE (tag:Tag {name: name})
    ON CREATE SET tag.id = name
  MERGE (t)-[:TAGGED]->(tag)
}
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
CALL (t, row) {
  UNWIND row.deps AS dep_id
  MATCH (dep:Task {id: dep_id})
  MERGE (t)-[:DEPENDS_ON]->(dep)
}
RETURN count(t) AS written
