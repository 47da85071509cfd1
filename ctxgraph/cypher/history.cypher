// The history's evidence for one query, in one round trip: the size of the
// finished-task corpus; the finished tasks mentioning any of $terms with each
// matched term's document frequency (terms in more than max(1, n x
// $max_df_share) tasks are left out) and the files their handoffs created or
// modified; whether a context map is loaded; and the rankable files (the
// map's, else every file) — how many, their documents' total length, and
// those with evidence, each with its history (finished tasks touching it,
// their total length in terms, the query terms its own text has): touched by
// a matched task or in the folder a touched module gone from the map became
// (pkg/data.py -> pkg/data/, as records.moved_folder), with a query term of
// their own, or among the $top_files most touched (path breaks ties), most
// touched first. A file's touches and task_len are kept on it at write time
// (files_refresh), so no file's handoffs are walked here.
// Every expansion starts from the node in hand (pattern comprehensions, the
// status tested afterwards): written as MATCH/COUNT/COLLECT with
// {status: 'completed'} the planner may start from the Task status index
// instead and hash-join — hundreds of megabytes of transaction memory per
// context (werkzeug's 1,500 tasks; the synthetic 10,000-node graph).
CALL () {
  MATCH (t:Task {status: 'completed'})
  RETURN count(t) AS n, sum(coalesce(t.term_count, 0)) AS total
}
WITH n, total, CASE WHEN toInteger(n * $max_df_share) < 1 THEN 1 ELSE toInteger(n * $max_df_share) END AS max_df
CALL (max_df) {
  UNWIND $terms AS name
  MATCH (tm:Term {name: name})
  WITH tm, [t IN [(tm)<-[:MENTIONS]-(t:Task) | t] WHERE t.status = 'completed'] AS mentioning
  WITH tm, mentioning, size(mentioning) AS df
  WHERE df > 0 AND df <= max_df
  UNWIND mentioning AS t
  WITH t, collect([tm.name, df]) AS matched
  RETURN collect({
    id: t.id, term_count: coalesce(t.term_count, 0), completed_at: coalesce(t.completed_at, ''),
    matched: matched, files: [(t)-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File) | f.path]
  }) AS tasks
}
CALL () {
  RETURN EXISTS { MATCH (f:File) WHERE coalesce(f.in_map, true) } AS mapped
}
CALL (tasks, mapped) {
  UNWIND tasks AS task
  UNWIND task.files AS path
  WITH DISTINCT path
  OPTIONAL MATCH (gone:File {path: path})
  WHERE mapped AND NOT coalesce(gone.in_map, true)
  WITH path, gone, last(split(path, '/')) AS name
  WITH path, CASE WHEN gone IS NOT NULL AND substring(name, 1) CONTAINS '.'
    THEN left(path, size(path) - size(last(split(name, '.'))) - 1) + '/' END AS folder
  OPTIONAL MATCH (kid:File)
  WHERE folder IS NOT NULL AND kid.path STARTS WITH folder AND coalesce(kid.in_map, true)
  WITH collect(DISTINCT path) AS paths, collect(DISTINCT kid.path) AS kids
  RETURN paths + kids AS touched
}
CALL (mapped) {
  MATCH (f:File)
  WHERE NOT mapped OR coalesce(f.in_map, true)
  RETURN count(f) AS n_files, sum(coalesce(f.task_len, 0) + size(coalesce(f.terms, []))) AS total_file_len
}
CALL (touched) {
  UNWIND touched AS path
  MATCH (f:File {path: path})
  RETURN collect(f) AS by_task
}
CALL () {
  UNWIND $terms AS name
  MATCH (:Term {name: name})<-[:MENTIONS]-(f:File)
  RETURN collect(f) AS by_term
}
CALL (mapped) {
  MATCH (f:File)
  WHERE NOT mapped OR coalesce(f.in_map, true)
  WITH f ORDER BY coalesce(f.touches, 0) DESC, f.path LIMIT $top_files
  RETURN collect(f) AS most_touched
}
// Nodes only in the DISTINCT (a list in scope would be part of every row's key).
CALL (mapped, by_task, by_term, most_touched) {
  UNWIND by_task + by_term + most_touched AS f
  WITH DISTINCT f
  WHERE NOT mapped OR coalesce(f.in_map, true)
  ORDER BY coalesce(f.touches, 0) DESC, f.path
  RETURN collect({
    props: f {.path, .component, .notes, .in_map}, touches: coalesce(f.touches, 0),
    task_len: coalesce(f.task_len, 0), own_len: size(coalesce(f.terms, [])),
    own_terms: [name IN coalesce(f.terms, []) WHERE name IN $terms]
  }) AS files
}
RETURN n, total, tasks, mapped, n_files, total_file_len, files
