// ctxgraph: the project's hot spots
// The files the most finished tasks changed (commits imported from git and
// agents' handoffs; retired tasks, rewritten away, left out), with how many of
// those tasks came in the last 90 days before the newest one, the last time
// one did, and how many gotchas have the file as their location (a code note's
// file and lines).
// Top 25 by tasks, then recent tasks.
// Parameters: none (edit the LIMIT to see more).
MATCH (t:Task)
WHERE t.status = 'completed' AND t.completed_at IS NOT NULL
WITH max(t.completed_at) AS newest
MATCH (t:Task)-[:HANDED_OFF]->(:Handoff)-[:CREATED|MODIFIED]->(f:File)
WHERE t.status <> 'retired'
WITH newest, f, count(DISTINCT t) AS tasks, max(t.completed_at) AS last_changed,
     count(DISTINCT CASE WHEN t.completed_at >= toString(datetime(newest) - duration('P90D')) THEN t END) AS recent
RETURN f.path AS path, f.component AS component, tasks, recent, last_changed,
       COUNT { MATCH (g:Gotcha) WHERE g.location = f.path OR g.location STARTS WITH f.path + ':' } AS gotchas
ORDER BY tasks DESC, recent DESC, path
LIMIT 25
