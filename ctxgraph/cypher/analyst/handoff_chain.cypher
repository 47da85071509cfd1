// ctxgraph: handoff chain of a task
// Handoff chain: every task behind a task through DEPENDS_ON, at any depth,
// nearest first, with what each of them handed off. `depth` 1 = a direct
// dependency; `via` is the shortest chain of task ids from this task to it.
// Columns: depth, task, name, status, handoff (summary or "no handoff yet"),
// read_next (files its handoff says to read next), knowledge (how many items
// its handoff discovered), via.
// Set first:  :param task_id => 'task-015'  (the script "ctxgraph: 0. set the task to look at")
MATCH (t:Task {id: $task_id})
MATCH chain = ANY SHORTEST (t)-[:DEPENDS_ON]->+(dep:Task)
WITH chain, dep,
     COLLECT { MATCH (dep)-[:HANDED_OFF]->(h:Handoff)
               RETURN coalesce(h.summary, '') AS s ORDER BY h.created_at, h.id } AS handoffs
RETURN length(chain) AS depth,
       dep.id AS task,
       dep.name AS name,
       dep.status AS status,
       CASE size(handoffs) WHEN 0 THEN '(no handoff yet)'
         ELSE reduce(text = head(handoffs), s IN tail(handoffs) | text + ' | ' + s) END AS handoff,
       COLLECT { MATCH (dep)-[:HANDED_OFF]->(:Handoff)-[:READ_NEXT]->(f:File) RETURN DISTINCT f.path AS p ORDER BY p } AS read_next,
       COUNT { (dep)-[:HANDED_OFF]->(:Handoff)-[:DISCOVERED]->() } AS knowledge,
       [n IN nodes(chain) | n.id] AS via
ORDER BY depth, task
