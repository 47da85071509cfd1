// Knowledge nodes for `ctxgraph knowledge list`, in id order: those of the
// $kinds (null: every kind) carrying every tag of $tags, and discovered by the
// handoff of task $task (null: whichever task, or none); each with the ids of
// the tasks whose handoffs discovered it.
MATCH (k:Knowledge)
WHERE ($kinds IS NULL OR k.kind IN $kinds) AND all(name IN $tags WHERE name IN coalesce(k.tags, []))
WITH k, [(t:Task)-[:HANDED_OFF]->(:Handoff)-[:DISCOVERED]->(k) | t.id] AS tasks
WHERE $task IS NULL OR $task IN tasks
RETURN properties(k) AS props, tasks
ORDER BY k.id
