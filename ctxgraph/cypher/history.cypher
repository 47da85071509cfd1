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
// their own, or among the $top_files most touched (path breaks ties).
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
  WITH f, [(f)<-[:MODIFIED|CREATED]-(:Handoff)<-[:HANDED_OFF]-(t:Task) | t] AS handed
  WITH f, reduce(seen = [], t IN handed |
    CASE WHEN t.status <> 'completed' OR t IN seen THEN seen ELSE seen + t END) AS touching
  WITH f, size(touching) AS touches, reduce(total = 0, t IN touching | total + coalesce(t.term_count, 0)) AS task_len,
       size(coalesce(f.terms, [])) AS own_len
  ORDER BY touches DESC, f.path
  RETURN collect({
    props: f {.path, .component, .notes, .in_map}, touches: touches, task_len: task_len, own_len: own_len,
    own_terms: [name IN coalesce(f.terms, []) WHERE name IN $terms]
  }) AS rankable, sum(task_len + own_len) AS total_file_len
}
RETURN n, total, tasks, mapped, size(rankable) AS n_files, total_file_len,
       [i IN range(0, size(rankable) - 1)
        WHERE i < $top_files OR rankable[i].props.path IN touched OR size(rankable[i].own_terms) > 0
        | rankable[i]] AS files
