// Set the task_text document (`doc`) of the tasks $ids, their terms when
// finished, else none, and the Completed label of the finished ones.
UNWIND $ids AS id
MATCH (t:Task {id: id})
SET t.doc = CASE WHEN t.status = 'completed' THEN coalesce(t.terms, []) END
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [1] ELSE [] END | SET t:Completed)
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [] ELSE [1] END | REMOVE t:Completed)
