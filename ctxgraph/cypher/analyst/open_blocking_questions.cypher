// ctxgraph: open blocking questions
// Open questions marked blocking, with the task whose handoff raised each one
// and the unfinished tasks that depend on that task (the work they may hold
// up). Tasks currently blocked are listed with their reason in `waiting`.
// Parameters: none.
MATCH (q:OpenQuestion)
WHERE q.blocking = true
OPTIONAL MATCH (raised:Task)-[:HANDED_OFF]->(:Handoff)-[:DISCOVERED]->(q)
RETURN q.id AS id,
       q.summary AS question,
       q.context AS context,
       q.recommendation AS recommendation,
       raised.id AS raised_by,
       COLLECT { MATCH (w:Task)-[:DEPENDS_ON]->(raised)
                 WHERE NOT coalesce(w.status, '') IN ['completed', 'failed']
                 RETURN w.id + ' (' + coalesce(w.status, '?')
                        + CASE WHEN w.blocked_reason IS NULL THEN '' ELSE ': ' + w.blocked_reason END
                        + ')' AS s ORDER BY s } AS waiting,
       COLLECT { MATCH (q)-[:TAGGED]->(tag:Tag) RETURN tag.name AS n ORDER BY n } AS tags
ORDER BY coalesce(q.updated_at, q.created_at, '') DESC, id
