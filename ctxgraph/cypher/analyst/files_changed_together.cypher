// ctxgraph: files that change together
// Pairs of files changed by the same finished task (a commit imported from git,
// or an agent's handoff), over the tasks that changed 2 to 20 files (a mass
// change says nothing about two files), retired tasks (commits rewritten away)
// left out. `together` counts the tasks; `share` is that count over the
// changes of the file of the pair changed less often: 1.0 means it never
// changed without the other. Top 25 pairs.
// Parameters: none (edit the LIMIT to see more).
MATCH (t:Task)-[:HANDED_OFF]->(h:Handoff)
WHERE t.status <> 'retired'
WITH DISTINCT t, COLLECT { MATCH (t)-[:HANDED_OFF]->(:Handoff)-[:CREATED|MODIFIED]->(f:File) RETURN DISTINCT f.path } AS paths
WHERE 2 <= size(paths) <= 20
UNWIND paths AS first
UNWIND paths AS second
WITH first, second WHERE first < second
WITH first, second, count(*) AS together
ORDER BY together DESC, first, second
LIMIT 25
WITH first, second, together,
     COUNT { MATCH (t:Task)-[:HANDED_OFF]->(:Handoff)-[:CREATED|MODIFIED]->(:File {path: first})
             WHERE t.status <> 'retired' } AS first_changes,
     COUNT { MATCH (t:Task)-[:HANDED_OFF]->(:Handoff)-[:CREATED|MODIFIED]->(:File {path: second})
             WHERE t.status <> 'retired' } AS second_changes
RETURN first, second, together, first_changes, second_changes,
       round(toFloat(together) / CASE WHEN first_changes < second_changes THEN first_changes ELSE second_changes END,
             3) AS share
ORDER BY together DESC, share DESC, first, second
