// The full-text terms of the tasks an import just created, added to the
// statistics BM25 scores task_text with: $terms is each term of the new tasks
// once, in name order, as [name, the new finished tasks having it]. Each Term
// is made when new and its task_df added to (when a finished task has it);
// the Corpus node takes the new documents and their length ($docs,
// $length). What tasks_doc counts, summed in Python for the batch.
CALL () {
  WITH * WHERE $docs <> 0 OR $length <> 0
  MERGE (c:Corpus {id: 'task_text'})
  SET c.docs = coalesce(c.docs, 0) + $docs, c.length = coalesce(c.length, 0) + $length
}
UNWIND $terms AS d
MERGE (term:Term {name: d[0]})
  ON CREATE SET term.id = d[0]
FOREACH (_ IN CASE WHEN d[1] > 0 THEN [1] ELSE [] END | SET term.task_df = coalesce(term.task_df, 0) + d[1])
