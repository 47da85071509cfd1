// Task neighbourhood as a picture: switch Neo4j Browser to the graph view.
// Draws the task, its dependency chain (any depth) with their handoffs, what
// those handoffs discovered and which files they touched, and the knowledge
// sharing the task's tags. Capped at 300 paths so Browser stays responsive.
// Set first:  :param task_id => 'task-043'
MATCH (t:Task {id: $task_id})
CALL (t) {
  MATCH p = (t)-[:DEPENDS_ON]->*(:Task)-[:HANDED_OFF]->(:Handoff)-[:DISCOVERED|CREATED|MODIFIED|READ_NEXT]->()
  RETURN p
  UNION
  MATCH p = (t)-[:DEPENDS_ON]->+(:Task)
  RETURN p
  UNION
  MATCH p = (t)-[:TAGGED]->(:Tag)<-[:TAGGED]-(:Pattern|Gotcha|Decision|OpenQuestion)
  RETURN p
  UNION
  MATCH p = (t)
  RETURN p
}
RETURN p
LIMIT 300
