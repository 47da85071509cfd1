// Every finished task's text fields and the hash of the text its vector was
// made of (null: none), by id; the caller keeps those to embed.
MATCH (t:Task {status: 'completed'})
RETURN t.id AS id, t.name AS name, t.objective AS objective, t.acceptance_criteria AS acceptance_criteria,
       t.embedding_hash AS embedding_hash
ORDER BY t.id
