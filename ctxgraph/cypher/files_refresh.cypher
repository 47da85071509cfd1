// Recount the history of the files at $paths (absent ones skipped): how many
// finished tasks' handoffs created or modified each (`touches`) and those
// tasks' total length in terms (`task_len`). Kept on the File at write time by
// every write that can change them (handoffs, task status and text, imports)
// so a context's history reads them instead of walking every file's handoffs.
UNWIND $paths AS path
MATCH (f:File {path: path})
WITH f, [(f)<-[:MODIFIED|CREATED]-(:Handoff)<-[:HANDED_OFF]-(t:Task) | t] AS handed
WITH f, reduce(seen = [], t IN handed |
  CASE WHEN t.status <> 'completed' OR t IN seen THEN seen ELSE seen + t END) AS touching
SET f.touches = size(touching),
    f.task_len = reduce(total = 0, t IN touching | total + coalesce(t.term_count, 0))
