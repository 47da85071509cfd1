// The history's text candidates for one query, and what scoring them exactly
// needs (graph/neo4j_store/text.py, core/bm25.py): Lucene's full-text indexes
// task_text and file_text (over `doc`, whitespace-analyzed: see schema.cypher,
// tasks_doc and files_refresh for the documents) find them, and the graph's
// exact statistics score them. $query is the query's terms as a Lucene query
// (memory_records.fulltext_query; the caller sends no statement without
// terms), $terms the same terms, $wanted the same terms as a map to true (a
// document is scanned once, each of its terms looked up in the map, not
// compared with every query term).
// - the statistics: per index (Corpus task_text / file_text) the documents
//   with a term and their total length, per query term its task_df and
//   file_df;
// - the $task_fetch finished tasks Lucene ranks best, each with Lucene's
//   score, its document's length and the query terms it has;
// - the $file_fetch files Lucene ranks best, each with Lucene's score, its
//   document's length and the query terms' occurrences in it.
// Only the chosen ones go on to history.cypher (their files, the votes), so a
// candidate that is not chosen costs its document's scan here and no more;
// when a cut fails its check, only this statement runs again.
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
  CALL db.index.fulltext.queryNodes('task_text', $query, {limit: $task_fetch}) YIELD node, score
  WITH node AS t, score
  RETURN collect({
    id: t.id, lucene: score, completed_at: coalesce(t.completed_at, ''), length: t.term_count,
    matched: [name IN t.doc WHERE $wanted[name]]
  }) AS tasks
}
CALL () {
  CALL db.index.fulltext.queryNodes('file_text', $query, {limit: $file_fetch}) YIELD node, score
  WITH node, score, node.doc AS doc
  RETURN collect({path: node.path, lucene: score, length: size(doc), hits: [name IN doc WHERE $wanted[name]]})
    AS text_files
}
RETURN task_corpus, file_corpus, df, tasks, text_files
