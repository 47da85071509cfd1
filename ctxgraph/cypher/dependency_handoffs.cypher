// Tasks by id (a task's dependencies), each with its handoff's summary, the
// files it says to read next, the files it created and the knowledge it found.
UNWIND $ids AS id
MATCH (d:Task {id: id})
OPTIONAL MATCH (d)-[:HANDED_OFF]->(h:Handoff)
RETURN properties(d) AS task,
       [(d)-[:DEPENDS_ON]->(x:Task) | x.id] AS deps,
       h.summary AS summary,
       CASE WHEN h IS NULL THEN [] ELSE [(h)-[r:READ_NEXT]->(f:File) | {file: f.path, reason: r.reason}] END AS to_read,
       CASE WHEN h IS NULL THEN [] ELSE [(h)-[r:CREATED]->(f:File) | {file: f.path, reason: r.purpose}] END AS created,
       CASE WHEN h IS NULL THEN [] ELSE [(h)-[:DISCOVERED]->(k:Knowledge) | properties(k)] END AS knowledge
ORDER BY d.id
