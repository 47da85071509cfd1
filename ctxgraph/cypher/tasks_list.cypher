// Every task (or those with $status), with dependency ids.
MATCH (t:Task)
WHERE $status IS NULL OR t.status = $status
RETURN properties(t) AS props, [(t)-[:DEPENDS_ON]->(d:Task) | d.id] AS deps
ORDER BY t.id
