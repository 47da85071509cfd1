// ctxgraph: gotchas by severity
// Gotchas, worst first: critical, high, medium, low (then any other value),
// newest first within a severity. Shows each gotcha's tags and the tasks whose
// handoffs discovered it.
// Parameters: none.
MATCH (g:Gotcha)
RETURN coalesce(g.severity, '(none)') AS severity,
       g.id AS id,
       g.summary AS gotcha,
       COLLECT { MATCH (g)-[:TAGGED]->(tag:Tag) RETURN tag.name AS n ORDER BY n } AS tags,
       COLLECT { MATCH (task:Task)-[:HANDED_OFF]->(:Handoff)-[:DISCOVERED]->(g) RETURN DISTINCT task.id AS i ORDER BY i } AS found_by,
       g.updated_at AS updated_at
ORDER BY CASE g.severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 WHEN 'low' THEN 3 ELSE 4 END,
         coalesce(g.updated_at, '') DESC, id
