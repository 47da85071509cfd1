// Tasks by id with the ids of their dependencies.
UNWIND $ids AS id
MATCH (t:Task {id: id})
RETURN properties(t) AS props, [(t)-[:DEPENDS_ON]->(d:Task) | d.id] AS deps
ORDER BY t.id
