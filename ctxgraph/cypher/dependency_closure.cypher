// The DEPENDS_ON edges reachable from the tasks $ids (a few of them: the
// variable-length pattern searches from each start on its own). Rows may
// repeat when the searches overlap; the caller removes the repeats.
MATCH (s:Task)-[:DEPENDS_ON*0..]->(a:Task)
WHERE s.id IN $ids
WITH DISTINCT a
MATCH (a)-[:DEPENDS_ON]->(b:Task)
RETURN a.id AS task, b.id AS dependency
