// The history's evidence for one query, bounded as core/evidence.py says, in
// one round trip after the text ranking's (history_text_tasks.cypher and
// history_text_files.cypher, scored exactly
// by graph/neo4j_store/text.py). $tasks are the ids of the finished tasks that
// text ranking chose, $text_paths the paths of the files it chose; $terms the
// query's terms.
// - the number of finished tasks (the count store's count of the Completed
//   label), whether a context map is loaded;
// - the chosen tasks, each with the files its handoffs created or modified;
// - `voted`: each path the chosen tasks and the neighbours touched with
//   ($near_files: the files of each neighbour, history_near.cypher),
//   for a module gone from the map, the files of the folder it became
//   (pkg/data.py -> pkg/data/, as records.moved_folder);
// - the files, each once, in path order: the chosen by text, the paths voted
//   (and those folders' files) and the $top_files most touched — of the map's
//   files when one is loaded, else of every file.
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
// the finished tasks chosen by text, with their files
CALL () {
  UNWIND $tasks AS id
  MATCH (t:Task {id: id})
  RETURN collect({id: t.id, files: [(t)-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File) | f.path]}) AS tasks
}
// the files chosen by text
CALL () {
  UNWIND $text_paths AS path
  MATCH (f:File {path: path})
  RETURN collect({f: f}) AS by_text
}
// the paths the candidate tasks and the neighbours touched, with the files of
// the folders touched modules gone from the map became
CALL (tasks, mapped) {
  UNWIND [task IN tasks | task.files] + $near_files AS paths
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
RETURN n, mapped, tasks, voted, files, [f IN most_touched | f.path] AS most_touched
