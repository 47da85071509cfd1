// The history's finished tasks that are text candidates for one query, and
// what scoring them exactly needs (graph/neo4j_store/text.py, core/bm25.py):
// Lucene's full-text index task_text (over `doc`, whitespace-analyzed: see
// schema.cypher and tasks_doc for the documents) finds them, and the graph's
// exact statistics score them. $query is the query's terms as a Lucene query
// (memory_records.fulltext_query; the caller sends no statement without
// terms), $terms the same terms, $wanted the same terms as a map to true (a
// document is scanned once, each of its terms looked up in the map, not
// compared with every query term).
// - the statistics: the documents with a term and their total length (Corpus
//   task_text), per query term its task_df;
// - the $fetch finished tasks Lucene ranks best, each with Lucene's
//   score, its document's length and the query terms it has.
// The files' candidates are history_text_files.cypher, run beside this on
// another thread. Only the chosen tasks go on to history.cypher (their files,
// the votes), so a candidate not chosen costs its document's scan here and
// no more; when the cut fails its check, only this statement runs again.
// include: text_statistics df=task_df corpus=task_text
CALL () {
  CALL db.index.fulltext.queryNodes('task_text', $query, {limit: $fetch}) YIELD node, score
  WITH node AS t, score
  RETURN collect({
    id: t.id, lucene: score, completed_at: coalesce(t.completed_at, ''), length: t.term_count,
    matched: [name IN t.doc WHERE $wanted[name]]
  }) AS found
}
RETURN corpus, df, found
