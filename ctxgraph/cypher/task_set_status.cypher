// Set a task's status; blocked_reason/blocked_at are null (removed) unless
// blocked (its task_text document and Completed label follow in tasks_doc).
MATCH (t:Task {id: $id})
SET t.status = $status,
    t.blocked_reason = $reason,
    t.blocked_at = $blocked_at,
    t.updated_at = $at
RETURN t.id AS id
