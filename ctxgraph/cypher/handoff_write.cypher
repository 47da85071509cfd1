// Write the handoff node and mark its task completed (or failed).
MATCH (t:Task {id: $task_id})
MERGE (h:Handoff {id: $id})
SET h = $props
MERGE (t)-[:HANDED_OFF]->(h)
SET t.status = $status,
    t.success = $success,
    t.outcome_summary = $summary,
    t.completed_at = $completed_at,
    t.updated_at = $completed_at
REMOVE t.blocked_reason, t.blocked_at
