// ctxgraph: context outcomes, newest first
// Each delivered context that its task's handoff scored: how many of the files
// the handoff created or modified were among the first 5 and 10 files the
// context named, how many of its items the handoff touched (their files, or
// tags shared with the knowledge it discovered), and the tokens of the items it
// did not touch. `ctxgraph outcomes` sums these up over a window. Newest 50.
// Parameters: none (edit the LIMIT to see more).
MATCH (d:Delivery)
WHERE d.score IS NOT NULL
OPTIONAL MATCH (t:Task {id: d.task_id})
RETURN d.at AS delivered,
       d.task_id AS task,
       t.name AS name,
       d.changed AS files_changed,
       d.hit5 AS hit_at_5,
       d.hit10 AS hit_at_10,
       d.files AS files_named,
       d.items_used AS items_used,
       d.items AS items,
       d.wasted_tokens AS wasted_tokens
ORDER BY delivered DESC, task
LIMIT 50
