// Every context-map file with its history: finished tasks that touched it,
// their total length in terms, and the query terms its own text mentions.
MATCH (f:File)
OPTIONAL MATCH (f)<-[:MODIFIED|CREATED]-(:Handoff)<-[:HANDED_OFF]-(t:Task {status: 'completed'})
WITH f, collect(DISTINCT t) AS tasks
RETURN properties(f) AS props, size(tasks) AS touches,
       reduce(total = 0, t IN tasks | total + coalesce(t.term_count, 0)) AS task_len,
       size(coalesce(f.terms, [])) AS own_len,
       [name IN coalesce(f.terms, []) WHERE name IN $terms] AS own_terms
ORDER BY f.path
