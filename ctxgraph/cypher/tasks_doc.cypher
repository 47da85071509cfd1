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
WITH collect({old: coalesce(old, []), new: coalesce(new, [])}) AS changes
CALL (changes) {
  UNWIND changes AS change
  CALL (change) {
    UNWIND change.old AS name
    WITH DISTINCT name
    RETURN name, -1 AS step
    UNION ALL
    UNWIND change.new AS name
    WITH DISTINCT name
    RETURN name, 1 AS step
  }
  WITH name, sum(step) AS delta
  WHERE delta <> 0
  WITH name, delta
  ORDER BY name
  MATCH (term:Term {name: name})
  SET term.task_df = coalesce(term.task_df, 0) + delta
}
CALL (changes) {
  WITH reduce(n = 0, c IN changes | n + CASE WHEN size(c.new) > 0 THEN 1 ELSE 0 END
                                        - CASE WHEN size(c.old) > 0 THEN 1 ELSE 0 END) AS docs,
       reduce(n = 0, c IN changes | n + size(c.new) - size(c.old)) AS length
  WHERE docs <> 0 OR length <> 0
  MERGE (c:Corpus {id: 'task_text'})
  SET c.docs = coalesce(c.docs, 0) + docs, c.length = coalesce(c.length, 0) + length
}
