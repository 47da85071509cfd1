// Link the tasks an import just created to their full-text terms, and add
// their documents to the statistics BM25 scores task_text with: $terms is
// each term of the new tasks once, in name order, as [name, the new finished
// tasks having it]; $rows the new tasks as {id, terms: positions in $terms}.
// Each Term is made when new and its task_df added to (when a finished task
// has it), then every task linked to its terms by their positions in the
// list of Term nodes (one lookup per term, not per task and term); the Corpus
// node takes the new documents and their length ($docs, $length). What
// task_upsert links and tasks_doc counts, summed in Python for the batch.
CALL () {
  WITH * WHERE $docs <> 0 OR $length <> 0
  MERGE (c:Corpus {id: 'task_text'})
  SET c.docs = coalesce(c.docs, 0) + $docs, c.length = coalesce(c.length, 0) + $length
}
UNWIND $terms AS d
MERGE (term:Term {name: d[0]})
  ON CREATE SET term.id = d[0]
FOREACH (_ IN CASE WHEN d[1] > 0 THEN [1] ELSE [] END | SET term.task_df = coalesce(term.task_df, 0) + d[1])
WITH collect(term) AS nodes
UNWIND $rows AS row
MATCH (t:Task {id: row.id})
UNWIND row.terms AS i
WITH t, nodes[i] AS term
CREATE (t)-[:MENTIONS]->(term)
