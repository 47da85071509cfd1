// Set the task_text document (`doc`) of the tasks $ids — their terms when
// finished, else none — and the Completed label of the finished ones, and keep
// the statistics BM25 scores task_text with (core/bm25.py) exact, whatever
// Lucene still counts of rewritten documents: per Term `task_df` (the
// finished tasks having it) and on the Corpus node `task_text` the documents
// with a term and their total length. Each task is locked before its old
// document is read; the terms are updated in name order. $fresh: count every
// document as new (a recount from zero, after text_stats_reset).
UNWIND $ids AS id
MATCH (t:Task {id: id})
SET t.id = t.id
WITH t, CASE WHEN $fresh THEN null ELSE t.doc END AS old,
     CASE WHEN t.status = 'completed' THEN coalesce(t.terms, []) END AS new
SET t.doc = new
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [1] ELSE [] END | SET t:Completed)
FOREACH (_ IN CASE WHEN t.status = 'completed' THEN [] ELSE [1] END | REMOVE t:Completed)
// include: term_stats df=task_df corpus=task_text
