// Benchmarks only: delete up to $batch nodes that have no relationships left
// (run after delete_relationships_batch, until it returns 0).
MATCH (n)
WITH n LIMIT $batch
DELETE n
RETURN count(*) AS deleted
