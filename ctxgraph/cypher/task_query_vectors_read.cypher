// The stored query vectors of tasks ($ids): id, the hash of the text each was
// made from and the vector; tasks without one give no row.
UNWIND $ids AS id
MATCH (t:Task {id: id})
WHERE t.query_vector IS NOT NULL
RETURN t.id AS id, t.query_hash AS hash, t.query_vector AS vector
