// ctxgraph: files changed most often
// Files changed most often: how many handoffs modified and created each file,
// how often a handoff told the next task to read it, and which tasks touched
// it. Top 25 by modifications, then creations.
// Parameters: none (edit the LIMIT to see more).
MATCH (f:File)
WITH f,
     COUNT { (:Handoff)-[:MODIFIED]->(f) } AS modified,
     COUNT { (:Handoff)-[:CREATED]->(f) } AS created,
     COUNT { (:Handoff)-[:READ_NEXT]->(f) } AS read_next
WHERE modified + created > 0
RETURN f.path AS path,
       f.component AS component,
       modified, created, read_next,
       COLLECT { MATCH (t:Task)-[:HANDED_OFF]->(:Handoff)-[:CREATED|MODIFIED]->(f) RETURN DISTINCT t.id AS i ORDER BY i } AS tasks
ORDER BY modified DESC, created DESC, path
LIMIT 25
