// Benchmarks only: delete up to $batch relationships (run until it returns 0).
// Emptying a large graph in one transaction exceeds Neo4j's default
// transaction memory, so the suite resets its server in batches.
MATCH ()-[r]->()
WITH r LIMIT $batch
DELETE r
RETURN count(*) AS deleted
