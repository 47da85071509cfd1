// Create the finished tasks of an imported history ($rows: [{props, tags,
// handoff}], a task's properties as upsert_tasks then its handoff leave them,
// its tags and its handoff's properties) that are not stored yet, each with its
// handoff, tags and full-text terms; a task already stored (an earlier import,
// or a concurrent one that committed first: MERGE waits for its lock) is left
// as it is. Returns the ids created. Their task_text documents, Completed
// labels, files and links follow in the same transaction (tasks_doc,
// files_fill, handoff_links, files_add_history).
UNWIND $rows AS row
MERGE (t:Task {id: row.props.id})
  ON CREATE SET t += row.props, t.imported_by = $token
WITH t, row
WHERE t.imported_by = $token
REMOVE t.imported_by
MERGE (h:Handoff {id: row.handoff.id})
SET h = row.handoff
MERGE (t)-[:HANDED_OFF]->(h)
WITH t, row
// include: task_tags
// include: task_terms
RETURN t.id AS id
