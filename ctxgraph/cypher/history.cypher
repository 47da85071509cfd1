// The history's evidence for one query, in one round trip: the size of the
// finished-task corpus; the finished tasks mentioning any of $terms with each
// matched term's document frequency (terms in more than max(1, n x
// $max_df_share) tasks are left out) and the files their handoffs created or
// modified; and every file with its history (finished tasks touching it,
// their total length in terms, the query terms its own text has).
CALL () {
  MATCH (t:Task {status: 'completed'})
  RETURN count(t) AS n, sum(coalesce(t.term_count, 0)) AS total
}
WITH n, total, CASE WHEN toInteger(n * $max_df_share) < 1 THEN 1 ELSE toInteger(n * $max_df_share) END AS max_df
CALL (max_df) {
  UNWIND $terms AS name
  MATCH (tm:Term {name: name})
  WITH tm, COUNT { (tm)<-[:MENTIONS]-(:Task {status: 'completed'}) } AS df
  WHERE df > 0 AND df <= max_df
  MATCH (tm)<-[:MENTIONS]-(t:Task {status: 'completed'})
  WITH t, collect([tm.name, df]) AS matched
  RETURN collect({
    id: t.id, term_count: coalesce(t.term_count, 0), completed_at: coalesce(t.completed_at, ''),
    matched: matched, files: [(t)-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File) | f.path]
  }) AS tasks
}
CALL () {
  MATCH (f:File)
  OPTIONAL MATCH (f)<-[:MODIFIED|CREATED]-(:Handoff)<-[:HANDED_OFF]-(t:Task {status: 'completed'})
  WITH f, collect(DISTINCT t) AS touching
  ORDER BY f.path
  RETURN collect({
    props: f {.path, .component, .notes, .in_map}, touches: size(touching),
    task_len: reduce(total = 0, t IN touching | total + coalesce(t.term_count, 0)),
    own_len: size(coalesce(f.terms, [])),
    own_terms: [name IN coalesce(f.terms, []) WHERE name IN $terms]
  }) AS files
}
RETURN n, total, tasks, files
