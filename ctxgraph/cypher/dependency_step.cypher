// The DEPENDS_ON edges out of the tasks $ids (one level of a breadth-first
// search; the caller keeps the visited set across levels).
UNWIND $ids AS id
MATCH (a:Task {id: id})-[:DEPENDS_ON]->(b:Task)
RETURN a.id AS task, b.id AS dependency
