// Write handoff nodes and mark their tasks completed (or failed; their
// task_text documents and Completed labels follow in tasks_doc); $rows:
// [{task_id, props, status, success, summary, completed_at}], one per handoff.
UNWIND $rows AS row
MATCH (t:Task {id: row.task_id})
MERGE (h:Handoff {id: row.props.id})
SET h = row.props
MERGE (t)-[:HANDED_OFF]->(h)
SET t.status = row.status,
    t.success = row.success,
    t.outcome_summary = row.summary,
    t.completed_at = row.completed_at,
    t.updated_at = row.completed_at
REMOVE t.blocked_reason, t.blocked_at
