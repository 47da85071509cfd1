// ctxgraph: task neighbourhood (graph view)
// Task neighbourhood as a picture: switch Neo4j Browser to the graph view.
// Draws the task, its dependency chain (any depth) with their handoffs, what
// those handoffs discovered and which files they touched, and the knowledge
// sharing the task's tags. One row per relationship (source, relationship,
// target), each drawn once however many chains reach it, and one row with the
// task alone (source only), so a task with no relationships still shows.
// Capped at 2,000 rows, far above what one task's neighbourhood holds.
// Set first:  :param task_id => 'task-015'  (the script "ctxgraph: 0. set the task to look at")
MATCH (t:Task {id: $task_id})
CALL (t) {
  MATCH (t)-[:DEPENDS_ON]->*(d:Task)
  WITH collect(DISTINCT d) AS chain
  UNWIND chain AS d
  CALL (d) {
    MATCH (d)-[r:DEPENDS_ON|HANDED_OFF]->()
    RETURN r
    UNION
    MATCH (d)-[:HANDED_OFF]->(:Handoff)-[r:DISCOVERED|CREATED|MODIFIED|READ_NEXT]->()
    RETURN r
  }
  RETURN DISTINCT startNode(r) AS source, r AS relationship, endNode(r) AS target
  UNION
  MATCH (t)-[:TAGGED]->(tag:Tag)<-[:TAGGED]-(k:Pattern|Gotcha|Decision|OpenQuestion)
  MATCH (k)-[r:TAGGED]->(tag)
  RETURN DISTINCT k AS source, r AS relationship, tag AS target
  UNION
  MATCH (t)-[r:TAGGED]->(tag:Tag)
  WHERE EXISTS { (tag)<-[:TAGGED]-(:Pattern|Gotcha|Decision|OpenQuestion) }
  RETURN t AS source, r AS relationship, tag AS target
  UNION
  RETURN t AS source, null AS relationship, null AS target
}
RETURN source, relationship, target
LIMIT 2000
