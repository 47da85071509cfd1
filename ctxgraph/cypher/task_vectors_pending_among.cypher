// task_vectors_pending among the tasks $ids: their text fields and the hash
// of the text their vector was made of (null: none), by id, finished ones only.
UNWIND $ids AS id
MATCH (t:Task {id: id})
WHERE t.status = 'completed'
RETURN t.id AS id, t.name AS name, t.objective AS objective, t.acceptance_criteria AS acceptance_criteria,
       t.embedding_hash AS embedding_hash
ORDER BY t.id
