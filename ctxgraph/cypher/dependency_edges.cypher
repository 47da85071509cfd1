// Every (task, dependency) pair.
MATCH (a:Task)-[:DEPENDS_ON]->(b:Task)
RETURN a.id AS task, b.id AS dependency
ORDER BY task, dependency
