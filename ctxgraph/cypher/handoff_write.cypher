// Write handoff nodes and mark their tasks completed (or failed; `doc`, the
// task_text index's document, and the Completed label follow); $rows: [{task_id, props, status,
// success, summary, completed_at}], one per handoff.
UNWIND $rows AS row
MATCH (t:Task {id: row.task_id})
MERGE (h:Handoff {id: row.props.id})
SET h = row.props
MERGE (t)-[:HANDED_OFF]->(h)
SET t.status = row.status,
    t.success = row.success,
    t.outcome_summary = row.summary,
    t.completed_at = row.completed_at,
    t.updated_at = row.completed_at,
    t.doc = CASE WHEN row.status = 'completed' THEN coalesce(t.terms, []) END
REMOVE t.blocked_reason, t.blocked_at
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [1] ELSE [] END | SET t:Completed)
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [] ELSE [1] END | REMOVE t:Completed)
