// Set a task's status; blocked_reason/blocked_at are null (removed) unless
// blocked; `doc` (the task_text index's document) its terms when finished.
MATCH (t:Task {id: $id})
SET t.status = $status,
    t.blocked_reason = $reason,
    t.blocked_at = $blocked_at,
    t.updated_at = $at,
    t.doc = CASE WHEN $status = 'completed' THEN coalesce(t.terms, []) END
RETURN t.id AS id
