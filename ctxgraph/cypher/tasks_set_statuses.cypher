// Set the status of the tasks $ids (absent ones skipped) to $status, as
// task_set_status does for one task not blocked (their task_text documents
// and Completed labels follow in tasks_doc). Returns the ids found.
UNWIND $ids AS id
MATCH (t:Task {id: id})
SET t.status = $status,
    t.updated_at = $at
REMOVE t.blocked_reason, t.blocked_at
RETURN t.id AS id
