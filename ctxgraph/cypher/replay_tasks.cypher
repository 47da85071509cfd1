// Every finished task with the files its handoffs created or modified and its text's vector (ctxgraph tune).
MATCH (t:Task {status: 'completed'})
OPTIONAL MATCH (t)-[:HANDED_OFF]->(:Handoff)-[:CREATED|MODIFIED]->(f:File)
WITH t, collect(DISTINCT f.path) AS files
RETURN t {.id, .completed_at, .terms, .signal_keywords, .signal_domains, .signal_files, .signal_types} AS props,
       files, t.embedding AS vector
ORDER BY t.id
