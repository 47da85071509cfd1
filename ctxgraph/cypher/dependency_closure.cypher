// Every DEPENDS_ON edge reachable from the tasks $ids (the part of the
// dependency graph a cycle check through them can visit), sorted.
MATCH (s:Task)-[:DEPENDS_ON*0..]->(a:Task)
WHERE s.id IN $ids
WITH DISTINCT a
MATCH (a)-[:DEPENDS_ON]->(b:Task)
RETURN a.id AS task, b.id AS dependency
ORDER BY task, dependency
