// Up to $batch finished tasks without their task_text document (`doc`;
// written before it was kept): their ids, for tasks_doc.
MATCH (t:Task {status: 'completed'})
WHERE t.doc IS NULL
RETURN t.id AS id
LIMIT $batch
