// The history's files that are text candidates for one query, and what
// scoring them exactly needs (graph/neo4j_store/text.py, core/bm25.py):
// Lucene's full-text index file_text (over `doc`, whitespace-analyzed: see
// schema.cypher and files_refresh for the documents) finds them, and the
// graph's exact statistics score them. $query, $terms and $wanted as in
// history_text_tasks.cypher, which runs beside this on another thread.
// - the statistics: the documents with a term and their total length (Corpus
//   file_text), per query term its file_df;
// - the $fetch files Lucene ranks best, each with Lucene's score, its
//   document's length and the query terms' occurrences in it.
// When the cut fails its check, only this statement runs again.
// include: text_statistics df=file_df corpus=file_text
CALL () {
  CALL db.index.fulltext.queryNodes('file_text', $query, {limit: $fetch}) YIELD node, score
  WITH node, score, node.doc AS doc
  RETURN collect({path: node.path, lucene: score, length: size(doc), hits: [name IN doc WHERE $wanted[name]]})
    AS found
}
RETURN corpus, df, found
