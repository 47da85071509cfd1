// The files the handoffs of the tasks $ids (or the handoffs $handoffs) created
// or modified: the ones whose `touches` and `task_len` a write must recount.
CALL () {
  UNWIND $ids AS id
  MATCH (:Task {id: id})-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File)
  RETURN f.path AS path
  UNION
  UNWIND $handoffs AS id
  MATCH (:Handoff {id: id})-[:MODIFIED|CREATED]->(f:File)
  RETURN f.path AS path
}
RETURN DISTINCT path
