// The task_text documents of finished tasks an import just created ($ids:
// their terms) with their Completed label, and the statistics BM25 scores
// task_text with, added: per term the new documents having it ($df: [[name,
// count]], in name order), on the Corpus node the new documents and their
// length ($docs, $length). What tasks_doc sets for a task without a document
// before, summed in Python for the batch.
CALL () {
  UNWIND $ids AS id
  MATCH (t:Task {id: id})
  SET t.doc = coalesce(t.terms, []), t:Completed
}
CALL () {
  UNWIND $df AS d
  MATCH (term:Term {name: d[0]})
  SET term.task_df = coalesce(term.task_df, 0) + d[1]
}
CALL () {
  WITH * WHERE $docs <> 0 OR $length <> 0
  MERGE (c:Corpus {id: 'task_text'})
  SET c.docs = coalesce(c.docs, 0) + $docs, c.length = coalesce(c.length, 0) + $length
}
