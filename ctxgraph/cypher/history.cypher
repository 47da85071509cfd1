// The history's evidence for one query, bounded as core/evidence.py says, in
// one round trip. The text ranking: Lucene's full-text indexes task_text and
// file_text (over `doc`, whitespace-analyzed: see schema.cypher, tasks_doc and
// files_refresh for the documents) find the candidates, which
// graph/neo4j_store/text.py scores again (core/bm25.py) from the statistics the
// graph keeps exact; $query is the query's terms as a Lucene query
// (memory_records.fulltext_query; null: no terms, no index lookups), $wanted
// the same terms as a map to true (a document is scanned once, each of its
// terms looked up in the map, not compared with every query term).
// - the number of finished tasks (the count store's count of the Completed
//   label), whether a context map is loaded;
// - the statistics: per index (Corpus task_text / file_text) the documents
//   with a term and their total length, per query term ($terms) its task_df
//   and file_df;
// - the $task_fetch finished tasks Lucene ranks best (task_text), each with
//   Lucene's score, its document's length, the query terms it has and the
//   files its handoffs created or modified;
// - the $file_fetch files Lucene ranks best (file_text), each with Lucene's
//   score, its document's length and the query terms' occurrences in it;
// - with $vector (the query's embedding; null: none), the $dense_top finished
//   tasks nearest to it (the task_embedding index, $dense_fetch candidates;
//   the index scores (1 + cosine) / 2, turned back into the cosine, rounded to
//   $cosine_decimals; ties: newer, then smaller id), each with the query terms
//   it mentions and its files;
// - `voted`: each path the candidate tasks and the neighbours touched with,
//   for a module gone from the map, the files of the folder it became
//   (pkg/data.py -> pkg/data/, as records.moved_folder);
// - the files, each once, in path order: the text candidates, the paths voted
//   (and those folders' files) and the $top_files most touched — of the map's
//   files when one is loaded, else of every file. text.py keeps those of the
//   tasks and files it chooses.
// A file's touches are kept on it at write time (files_refresh).
// Every expansion starts from the node in hand (pattern comprehensions): with
// {status: 'completed'} in a MATCH the planner may start from the Task status
// index instead and hash-join.
CALL () {
  RETURN COUNT { (:Completed) } AS n
}
CALL () {
  RETURN EXISTS { MATCH (f:File) WHERE coalesce(f.in_map, true) } AS mapped
}
// the statistics of the full-text indexes
CALL () {
  OPTIONAL MATCH (c:Corpus {id: 'task_text'})
  RETURN [coalesce(c.docs, 0), coalesce(c.length, 0)] AS task_corpus
}
CALL () {
  OPTIONAL MATCH (c:Corpus {id: 'file_text'})
  RETURN [coalesce(c.docs, 0), coalesce(c.length, 0)] AS file_corpus
}
CALL () {
  WITH $query AS query
  WHERE query IS NOT NULL
  UNWIND $terms AS name
  OPTIONAL MATCH (term:Term {name: name})
  RETURN collect([name, coalesce(term.task_df, 0), coalesce(term.file_df, 0)]) AS df
}
// the finished tasks Lucene ranks best
CALL () {
  WITH $query AS query
  WHERE query IS NOT NULL
  CALL db.index.fulltext.queryNodes('task_text', query, {limit: $task_fetch}) YIELD node, score
  WITH node AS t, score
  RETURN collect({
    id: t.id, lucene: score, completed_at: coalesce(t.completed_at, ''), length: t.term_count,
    matched: [name IN t.doc WHERE $wanted[name]],
    files: [(t)-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File) | f.path]
  }) AS tasks
}
// the files Lucene ranks best
CALL () {
  WITH $query AS query
  WHERE query IS NOT NULL
  CALL db.index.fulltext.queryNodes('file_text', query, {limit: $file_fetch}) YIELD node, score
  WITH node, score, node.doc AS doc
  RETURN collect({f: node, lucene: score, length: size(doc), hits: [name IN doc WHERE $wanted[name]]}) AS by_text
}
// the finished tasks nearest to the query's embedding
CALL () {
  WITH $vector AS vector
  WHERE vector IS NOT NULL
  CALL db.index.vector.queryNodes('task_embedding', $dense_fetch, vector) YIELD node, score
  WITH node AS t, round(2 * score - 1, $cosine_decimals) AS cosine
  WHERE t.status = 'completed'
  WITH t, cosine
  ORDER BY cosine DESC, coalesce(t.completed_at, '') DESC, t.id
  LIMIT $dense_top
  RETURN collect({
    id: t.id, score: cosine, completed_at: coalesce(t.completed_at, ''),
    matched: [(t)-[:MENTIONS]->(tm:Term) WHERE tm.name IN $terms | tm.name],
    files: reduce(seen = [], p IN [(t)-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File) | f.path] |
      CASE WHEN p IN seen THEN seen ELSE seen + p END)
  }) AS near
}
// the paths the candidate tasks and the neighbours touched, with the files of
// the folders touched modules gone from the map became
CALL (tasks, near, mapped) {
  UNWIND [task IN tasks | task.files] + [n IN near | n.files] AS paths
  UNWIND paths AS path
  WITH DISTINCT path
  OPTIONAL MATCH (gone:File {path: path})
  WHERE mapped AND NOT coalesce(gone.in_map, true)
  WITH path, gone, last(split(path, '/')) AS name
  WITH path, CASE WHEN gone IS NOT NULL AND substring(name, 1) CONTAINS '.'
    THEN left(path, size(path) - size(last(split(name, '.'))) - 1) + '/' END AS folder
  OPTIONAL MATCH (kid:File)
  WHERE folder IS NOT NULL AND kid.path STARTS WITH folder AND coalesce(kid.in_map, true)
  WITH path, collect(DISTINCT kid.path) AS kids
  RETURN collect({path: path, kids: kids}) AS voted
}
// the $top_files most touched rankable files (touches, then path): the touched
// ones read from the file_touches index in descending order (the files tied
// at the last count read whole, to order them by path), then untouched ones
// in path order when fewer were touched
CALL (mapped) {
  MATCH (f:File)
  WHERE f.touches > 0 AND (NOT mapped OR coalesce(f.in_map, true))
  WITH f ORDER BY f.touches DESC LIMIT $top_files
  RETURN min(f.touches) AS floor, count(f) AS found
}
CALL (mapped, floor) {
  MATCH (f:File)
  WHERE f.touches >= floor AND (NOT mapped OR coalesce(f.in_map, true))
  WITH f ORDER BY f.touches DESC, f.path LIMIT $top_files
  RETURN collect(f) AS touched
}
CALL (mapped, found) {
  // (a list that is empty when enough were touched: no scan then)
  UNWIND CASE WHEN found < $top_files THEN [true] ELSE [] END AS short
  MATCH (f:File)
  WHERE coalesce(f.touches, 0) = 0 AND (NOT mapped OR coalesce(f.in_map, true))
  WITH f ORDER BY f.path LIMIT $top_files
  RETURN collect(f) AS untouched
}
WITH *, (touched + untouched)[..$top_files] AS most_touched
CALL (by_text, voted, most_touched, mapped) {
  CALL (by_text, voted, most_touched) {
    UNWIND by_text AS x
    RETURN x.f AS f
    UNION
    UNWIND voted AS v
    UNWIND [v.path] + v.kids AS path
    MATCH (f:File {path: path})
    RETURN f
    UNION
    UNWIND most_touched AS f
    RETURN f
  }
  WITH mapped, f
  WHERE NOT mapped OR coalesce(f.in_map, true)
  ORDER BY f.path
  RETURN collect({props: f {.path, .component, .notes, .in_map}, touches: coalesce(f.touches, 0)}) AS files
}
RETURN n, mapped, task_corpus, file_corpus, coalesce(df, []) AS df, tasks, near, voted, files,
       [x IN by_text | {path: x.f.path, lucene: x.lucene, length: x.length, hits: x.hits}] AS text_files,
       [f IN most_touched | f.path] AS most_touched
