// The history's evidence for one query, bounded as core/evidence.py says
// (the same arithmetic as its bound(), in one round trip):
// - the finished-task corpus (count, total length in terms), whether a
//   context map is loaded, the rankable files (the map's, else every file):
//   their count and their documents' total length;
// - every finished task mentioning a query term (terms in more than
//   min(max(1, n x $max_df_share), $max_df_cap) tasks left out), scored by
//   BM25 ($k1, $b); the $task_top best (ties: newer, then smaller id) are
//   returned with their matched terms (and document frequencies) and the
//   files their handoffs created or modified;
// - each rankable file's document over the query: per term, how many matched
//   tasks touching it mention the term (`term_tf`) plus its own query terms
//   (terms of more than $max_df_cap rankable files left out);
//   the number of such documents per term (`file_df`), and each document's
//   BM25 text score;
// - the files returned: the $file_top best by text (path breaks ties), those
//   the returned tasks touched (and, for a module gone from the map, the files
//   of the folder it became: pkg/data.py -> pkg/data/, as
//   records.moved_folder), and the $top_files most touched.
// - with $vector (the query's embedding; null: none), the $dense_top finished
//   tasks nearest to it (the task_embedding index, $dense_fetch candidates;
//   the index scores (1 + cosine) / 2, turned back into the cosine, rounded to
//   $cosine_decimals; ties: newer, then smaller id), each with the query terms
//   it mentions and its files; those files are returned too.
// A file's touches and task_len are kept on it at write time (files_refresh).
// Every expansion starts from the node in hand (pattern comprehensions, the
// status tested afterwards): written as MATCH/COUNT/COLLECT with
// {status: 'completed'} the planner may start from the Task status index
// instead and hash-join — hundreds of megabytes of transaction memory per
// context (werkzeug's 1,500 tasks; the synthetic 10,000-node graph).
// Subqueries return lists of nodes or maps: a list in scope of a DISTINCT or
// an aggregation would be part of every row's key.
CALL () {
  MATCH (t:Task {status: 'completed'})
  RETURN count(t) AS n, sum(coalesce(t.term_count, 0)) AS total
}
CALL () {
  RETURN EXISTS { MATCH (f:File) WHERE coalesce(f.in_map, true) } AS mapped
}
CALL (mapped) {
  MATCH (f:File)
  WHERE NOT mapped OR coalesce(f.in_map, true)
  RETURN count(f) AS n_files, sum(coalesce(f.task_len, 0) + size(coalesce(f.terms, []))) AS total_file_len
}
// the query terms a file's own text may count: those of at most $max_df_cap rankable files
CALL (mapped) {
  UNWIND $terms AS name
  MATCH (tm:Term {name: name})
  WITH tm, size([(tm)<-[:MENTIONS]-(f:File) WHERE NOT mapped OR coalesce(f.in_map, true) | 1]) AS files
  WHERE files > 0 AND files <= $max_df_cap
  RETURN collect(tm.name) AS own_ok
}
WITH n, total, mapped, n_files, total_file_len, own_ok,
     CASE WHEN toInteger(n * $max_df_share) < 1 THEN 1
          WHEN toInteger(n * $max_df_share) > $max_df_cap THEN $max_df_cap
          ELSE toInteger(n * $max_df_share) END AS max_df,
     CASE WHEN n = 0 OR total = 0 THEN 1.0 ELSE toFloat(total) / n END AS avg_task,
     CASE WHEN n_files = 0 OR total_file_len = 0 THEN 1.0 ELSE toFloat(total_file_len) / n_files END AS avg_file
// every matched task: its matched terms, BM25 score and the distinct files it touched
CALL (n, max_df, avg_task) {
  UNWIND $terms AS name
  MATCH (tm:Term {name: name})
  WITH tm, [t IN [(tm)<-[:MENTIONS]-(t:Task) | t] WHERE t.status = 'completed'] AS mentioning
  WITH tm, mentioning, size(mentioning) AS df
  WHERE df > 0 AND df <= max_df
  UNWIND mentioning AS t
  WITH t, collect([tm.name, df]) AS matched
  WITH t, matched,
       reduce(s = 0.0, m IN matched | s + log(1.0 + (n - m[1] + 0.5) / (m[1] + 0.5))) AS idfs,
       reduce(seen = [], f IN [(t)-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File) | f] |
         CASE WHEN f IN seen THEN seen ELSE seen + f END) AS files
  RETURN collect({
    t: t, matched: matched, files: files,
    score: round(idfs * ($k1 + 1) / (1 + $k1 * (1 - $b + $b * coalesce(t.term_count, 0) / avg_task)), 9)
  }) AS hits
}
CALL (hits) {
  UNWIND hits AS h
  WITH h ORDER BY h.score DESC, coalesce(h.t.completed_at, '') DESC, h.t.id
  LIMIT $task_top
  RETURN collect({
    id: h.t.id, term_count: coalesce(h.t.term_count, 0), completed_at: coalesce(h.t.completed_at, ''),
    matched: h.matched, files: [f IN h.files | f.path]
  }) AS tasks
}
// the files' documents over the query: per term, the rankable files having it
CALL (hits, mapped, own_ok) {
  CALL (hits, mapped, own_ok) {
    UNWIND hits AS h
    UNWIND h.files AS f
    WITH f, h.matched AS matched
    WHERE NOT mapped OR coalesce(f.in_map, true)
    UNWIND matched AS m
    RETURN f, m[0] AS term, 1 AS by_task, 0 AS own
    UNION ALL
    UNWIND own_ok AS name
    MATCH (:Term {name: name})<-[:MENTIONS]-(f:File)
    WITH DISTINCT f, own_ok
    WHERE NOT mapped OR coalesce(f.in_map, true)
    UNWIND [name IN coalesce(f.terms, []) WHERE name IN own_ok] AS term
    RETURN f, term, 0 AS by_task, 1 AS own
  }
  WITH f, term, sum(by_task) AS by_task, sum(own) AS own
  WITH term, collect({f: f, by_task: by_task, c: by_task + own}) AS postings
  RETURN collect({term: term, df: size(postings), postings: postings}) AS by_term
}
// each document's terms from tasks (term_tf) and BM25 text score, best first
CALL (by_term, n_files, avg_file) {
  UNWIND by_term AS x
  UNWIND x.postings AS p
  WITH n_files, avg_file, p.f AS f, x.term AS term, x.df AS df, p.by_task AS by_task, p.c AS c
  WITH f, collect(CASE WHEN by_task > 0 THEN [term, by_task] END) AS term_tf,
       round(sum(log(1.0 + (n_files - df + 0.5) / (df + 0.5)) * ($k1 + 1) * c
           / (c + $k1 * (1 - $b + $b * (coalesce(f.task_len, 0) + size(coalesce(f.terms, []))) / avg_file))), 9)
         AS text
  ORDER BY text DESC, f.path
  RETURN collect({f: f, term_tf: term_tf}) AS docs
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
CALL (mapped) {
  MATCH (f:File)
  WHERE NOT mapped OR coalesce(f.in_map, true)
  WITH f ORDER BY coalesce(f.touches, 0) DESC, f.path LIMIT $top_files
  RETURN collect(f) AS most_touched
}
CALL (docs, voted, most_touched, mapped, own_ok) {
  CALL (docs, voted, most_touched) {
    UNWIND range(0, size(docs) - 1) AS i
    WITH docs[i] AS d, i, voted, most_touched
    WHERE i < $file_top OR d.f.path IN voted OR d.f IN most_touched
    RETURN d.f AS f, d.term_tf AS term_tf
    UNION ALL
    UNWIND voted AS path
    MATCH (f:File {path: path})
    RETURN f, [] AS term_tf
    UNION ALL
    UNWIND most_touched AS f
    RETURN f, [] AS term_tf
  }
  WITH mapped, own_ok, f, collect(term_tf) AS found
  WHERE NOT mapped OR coalesce(f.in_map, true)
  ORDER BY coalesce(f.touches, 0) DESC, f.path
  RETURN collect({
    props: f {.path, .component, .notes, .in_map}, touches: coalesce(f.touches, 0),
    task_len: coalesce(f.task_len, 0), own_len: size(coalesce(f.terms, [])),
    own_terms: [name IN coalesce(f.terms, []) WHERE name IN own_ok],
    term_tf: reduce(acc = [], tf IN found | acc + tf)
  }) AS files
}
RETURN n, total, tasks, mapped, n_files, total_file_len, files, [x IN by_term | [x.term, x.df]] AS file_df, near
