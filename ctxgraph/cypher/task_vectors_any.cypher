// One row when any task has a vector: the nearest to any probe vector
// ($probe), from the task_embedding index (no scan of the tasks).
CALL db.index.vector.queryNodes('task_embedding', 1, $probe) YIELD node
RETURN node.id AS id
