// Set a task's status; blocked_reason/blocked_at are null (removed) unless
// blocked; `doc` (the task_text index's document) its terms and the
// `Completed` label when finished.
MATCH (t:Task {id: $id})
SET t.status = $status,
    t.blocked_reason = $reason,
    t.blocked_at = $blocked_at,
    t.updated_at = $at,
    t.doc = CASE WHEN $status = 'completed' THEN coalesce(t.terms, []) END
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [1] ELSE [] END | SET t:Completed)
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [] ELSE [1] END | REMOVE t:Completed)
RETURN t.id AS id
