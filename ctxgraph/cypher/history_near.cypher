// The history's neighbours by vector for one query: the $dense_top finished
// tasks nearest to $vector (the query's embedding) by the task_embedding
// index ($dense_fetch candidates; the index scores (1 + cosine) / 2, turned
// back into the cosine, rounded to $cosine_decimals; ties: newer, then
// smaller id), each with the query terms ($terms) it mentions and the files
// its handoffs created or modified (each once). Its own statement, run beside
// the text ranking (graph/neo4j_store/store.py): nothing in it waits for that
// ranking, and history.cypher takes its files as $near_files.
CALL db.index.vector.queryNodes('task_embedding', $dense_fetch, $vector) YIELD node, score
WITH node AS t, round(2 * score - 1, $cosine_decimals) AS cosine
WHERE t.status = 'completed'
WITH t, cosine
ORDER BY cosine DESC, coalesce(t.completed_at, '') DESC, t.id
LIMIT $dense_top
RETURN collect({
  id: t.id, score: cosine, completed_at: coalesce(t.completed_at, ''),
  matched: [name IN $terms WHERE name IN coalesce(t.terms, [])],
  files: reduce(seen = [], p IN [(t)-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File) | f.path] |
    CASE WHEN p IN seen THEN seen ELSE seen + p END)
}) AS near
