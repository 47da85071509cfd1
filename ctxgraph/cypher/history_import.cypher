// Create the finished tasks of an imported history ($rows: [{props, doc,
// completed, handoff}]: a task's properties as upsert_tasks then its handoff
// leave them, its task_text document (its terms when finished, else null),
// whether it is finished, and its handoff's properties) that are not stored
// yet, each with its document, its Completed label (as tasks_doc sets them)
// and its handoff; a task already stored (an earlier import, or a concurrent
// one that committed first: MERGE waits for its lock) is left as it is.
// Returns the ids created. Their terms, the text statistics, files and links
// follow in the same transaction (history_terms, files_fill, history_links,
// files_add_history).
UNWIND $rows AS row
MERGE (t:Task {id: row.props.id})
  ON CREATE SET t += row.props, t.doc = row.doc, t.imported_by = $token
WITH t, row
WHERE t.imported_by = $token
REMOVE t.imported_by
FOREACH (_ IN CASE WHEN row.completed THEN [1] ELSE [] END | SET t:Completed)
MERGE (h:Handoff {id: row.handoff.id})
SET h = row.handoff
CREATE (t)-[:HANDED_OFF]->(h)
RETURN t.id AS id
