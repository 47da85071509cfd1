// Remove up to $batch nodes with their relationships (tests and
// `ctxgraph init --reset`); run until it returns 0. Emptying a large graph in
// one transaction exceeds Neo4j's default transaction memory (100k nodes).
MATCH (n)
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
