// Recount the history of the files at $paths (absent ones skipped): how many
// finished tasks' handoffs created or modified each (`touches`), those tasks'
// total length in terms (`task_len`), and the file's document in the
// file_text index (`doc`): its own terms plus every such task's terms, set
// only on a rankable file (in the map, or in_map unset), removed otherwise.
// Kept on the File at write time by every write that can change them
// (handoffs, task status and text, the context map, imports) so a context's
// history reads them instead of walking every file's handoffs. Linear in the
// touching tasks' terms (collected, not concatenated one list at a time).
// The statistics BM25 scores file_text with are kept exact as tasks_doc keeps
// task_text's: per Term `file_df`, on the Corpus node `file_text` the
// documents with a term and their total length ($fresh: as tasks_doc).
// Each file is locked before its history is read (the first SET): a
// concurrent writer's recount waits for this one's commit and then sees its
// links, so the last to commit counts every writer's ($paths sorted: the
// writers lock in one order).
UNWIND $paths AS path
MATCH (f:File {path: path})
SET f.path = f.path
WITH f
CALL (f) {
  UNWIND [(f)<-[:MODIFIED|CREATED]-(:Handoff)<-[:HANDED_OFF]-(t:Task) WHERE t.status = 'completed' | t] AS t
  WITH DISTINCT t
  RETURN collect(t) AS touching
}
CALL (f, touching) {
  WITH * WHERE coalesce(f.in_map, true)
  UNWIND touching AS t
  UNWIND coalesce(t.terms, []) AS name
  RETURN collect(name) AS task_terms
}
WITH f, touching, CASE WHEN $fresh THEN null ELSE f.doc END AS old,
     CASE WHEN coalesce(f.in_map, true) THEN coalesce(f.terms, []) + task_terms END AS new
SET f.touches = size(touching),
    f.task_len = reduce(total = 0, t IN touching | total + coalesce(t.term_count, 0)),
    f.doc = new
// include: term_stats df=file_df corpus=file_text
