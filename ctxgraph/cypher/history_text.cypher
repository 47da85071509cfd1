// The candidates of the history's text ranking and what scoring them exactly
// takes (graph/neo4j_store/text.py; core/bm25.py). Lucene's full-text indexes
// only find them: their own scores count the documents ingestion rewrote
// until their segments merge, so the scores are computed again from the
// statistics the graph keeps exact (tasks_doc, files_refresh):
// - per index (Corpus task_text / file_text) the documents with a term and
//   their total length; per query term ($terms) its task_df and file_df;
// - the $task_fetch finished tasks Lucene ranks best (task_text; 0: none),
//   each with Lucene's score, its document's length and the query terms it has;
// - the $file_fetch files it ranks best (file_text; 0: none), each with
//   Lucene's score, its document's length and the query terms' occurrences in it.
// $query: the terms as a Lucene query (memory_records.fulltext_query).
CALL () {
  OPTIONAL MATCH (c:Corpus {id: 'task_text'})
  RETURN [coalesce(c.docs, 0), coalesce(c.length, 0)] AS task_corpus
}
CALL () {
  OPTIONAL MATCH (c:Corpus {id: 'file_text'})
  RETURN [coalesce(c.docs, 0), coalesce(c.length, 0)] AS file_corpus
}
CALL () {
  UNWIND $terms AS name
  OPTIONAL MATCH (term:Term {name: name})
  RETURN collect([name, coalesce(term.task_df, 0), coalesce(term.file_df, 0)]) AS df
}
CALL () {
  WITH $task_fetch AS fetch
  WHERE fetch > 0
  CALL db.index.fulltext.queryNodes('task_text', $query, {limit: fetch}) YIELD node, score
  RETURN collect({id: node.id, lucene: score, completed_at: coalesce(node.completed_at, ''),
                  length: size(node.doc), matched: [name IN $terms WHERE name IN node.doc]}) AS tasks
}
CALL () {
  WITH $file_fetch AS fetch
  WHERE fetch > 0
  CALL db.index.fulltext.queryNodes('file_text', $query, {limit: fetch}) YIELD node, score
  RETURN collect({path: node.path, lucene: score, length: size(node.doc),
                  hits: [name IN node.doc WHERE name IN $terms]}) AS files
}
RETURN task_corpus, file_corpus, df, tasks, files
