// The files each of the tasks $ids had its handoff create or modify.
UNWIND $ids AS id
MATCH (:Task {id: id})-[:HANDED_OFF]->(:Handoff)-[:CREATED|MODIFIED]->(f:File)
RETURN id AS task_id, collect(DISTINCT f.path) AS paths
