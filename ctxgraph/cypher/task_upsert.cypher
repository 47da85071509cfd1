// Create or replace tasks ($rows: [{props, tags, deps}]): properties replaced
// whole (created_at and the text's vectors kept: their embedding_hash and
// query_hash tell whether they are still of this text), tags re-linked, the
// full-text terms' Term nodes made, dependency edges added. `doc` (the task_text index's
// document) stays as it was (the task locked before it is read) for
// tasks_doc, run next in the same transaction, to set with the index's
// statistics (and the `Completed` label).
UNWIND $rows AS row
MERGE (t:Task {id: row.props.id})
SET t.id = t.id
WITH t, row, row.props AS props, t.created_at AS old_created, t.embedding AS old_vector,
     t.embedding_hash AS old_hash, t.query_vector AS old_query, t.query_hash AS old_query_hash, t.doc AS old_doc
SET t = props {.*, doc: old_doc}
SET t.created_at = coalesce(old_created, row.props.created_at),
    t.embedding = old_vector, t.embedding_hash = old_hash, t.query_vector = old_query, t.query_hash = old_query_hash
WITH t, row
// include: task_tags
// include: task_terms
CALL (t, row) {
  UNWIND row.deps AS dep_id
  MATCH (dep:Task {id: dep_id})
  MERGE (t)-[:DEPENDS_ON]->(dep)
}
RETURN count(t) AS written
