// The history's evidence for one query, bounded as core/evidence.py says, in
// one round trip. The text ranking is Lucene's BM25 (the full-text indexes
// task_text and file_text over `doc`, whitespace-analyzed: see schema.cypher,
// task_upsert and files_refresh for the documents); $query is the query's
// terms as a Lucene query (memory_records.fulltext_query; null: no terms, no
// index lookups):
// - the number of finished tasks (the count store's count of the Completed
//   label), whether a context map is loaded;
// - the $task_top finished tasks best matching the query (task_text), with
//   their Lucene scores, the query terms ($terms) they mention and the files
//   their handoffs created or modified;
// - the $file_top rankable files best matching the query (file_text), with
//   their scores;
// - with $vector (the query's embedding; null: none), the $dense_top finished
//   tasks nearest to it (the task_embedding index, $dense_fetch candidates;
//   the index scores (1 + cosine) / 2, turned back into the cosine, rounded to
//   $cosine_decimals; ties: newer, then smaller id), each with the query terms
//   it mentions and its files;
// - the files returned, each once, in path order: those best by text (with
//   their score), those the returned tasks and neighbours touched (and, for a
//   module gone from the map, the files of the folder it became: pkg/data.py
//   -> pkg/data/, as records.moved_folder) and the $top_files most touched —
//   of the map's files when one is loaded, else of every file.
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
// the finished tasks best matching the query
CALL () {
  WITH $query AS query
  WHERE query IS NOT NULL
  CALL db.index.fulltext.queryNodes('task_text', query, {limit: $task_top}) YIELD node, score
  WITH node AS t, score
  RETURN collect({
    id: t.id, score: score, completed_at: coalesce(t.completed_at, ''),
    matched: [name IN $terms WHERE name IN t.terms],
    files: [(t)-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File) | f.path]
  }) AS tasks
}
// the rankable files best matching the query
CALL () {
  WITH $query AS query
  WHERE query IS NOT NULL
  CALL db.index.fulltext.queryNodes('file_text', query, {limit: $file_top}) YIELD node, score
  RETURN collect({f: node, score: score}) AS by_text
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
// the paths the returned tasks and neighbours touched, and the folders touched
// modules gone from the map became
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
  WITH collect(DISTINCT path) AS paths, collect(DISTINCT kid.path) AS kids
  RETURN paths + kids AS voted
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
    RETURN x.f AS f, x.score AS score
    UNION ALL
    UNWIND voted AS path
    MATCH (f:File {path: path})
    RETURN f, null AS score
    UNION ALL
    UNWIND most_touched AS f
    RETURN f, null AS score
  }
  WITH mapped, f, max(score) AS score
  WHERE NOT mapped OR coalesce(f.in_map, true)
  ORDER BY f.path
  RETURN collect({props: f {.path, .component, .notes, .in_map}, touches: coalesce(f.touches, 0), score: score})
    AS files
}
RETURN n, mapped, tasks, files, near
