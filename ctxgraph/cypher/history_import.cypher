// Create the finished tasks of an imported history ($rows: [{props, tags,
// handoff}], a task's properties as upsert_tasks then its handoff leave them,
// its tags and its handoff's properties) that are not stored yet, each with its
// handoff; a task already stored (an earlier import, or a concurrent one that
// committed first: MERGE waits for its lock) is left as it is. Returns the ids
// created. Their tags, full-text terms, task_text documents, Completed labels,
// files and links follow in the same transaction (history_tags, history_terms,
// history_docs, files_fill, history_links, files_add_history).
UNWIND $rows AS row
MERGE (t:Task {id: row.props.id})
  ON CREATE SET t += row.props, t.imported_by = $token
WITH t, row
WHERE t.imported_by = $token
REMOVE t.imported_by
MERGE (h:Handoff {id: row.handoff.id})
SET h = row.handoff
CREATE (t)-[:HANDED_OFF]->(h)
RETURN t.id AS id
