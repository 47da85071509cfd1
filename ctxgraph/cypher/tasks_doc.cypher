// Set the task_text document (`doc`) of the tasks $ids: their terms when
// finished, else none.
UNWIND $ids AS id
MATCH (t:Task {id: id})
SET t.doc = CASE WHEN t.status = 'completed' THEN coalesce(t.terms, []) END
