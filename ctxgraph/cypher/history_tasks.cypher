// Finished tasks mentioning any of $terms, with each matched term's document
// frequency (terms in more than $max_df tasks are left out: they carry no
// signal) and the files the task's handoff created or modified.
UNWIND $terms AS name
MATCH (tm:Term {name: name})
WITH tm, COUNT { (tm)<-[:MENTIONS]-(:Task {status: 'completed'}) } AS df
WHERE df > 0 AND df <= $max_df
MATCH (tm)<-[:MENTIONS]-(t:Task {status: 'completed'})
WITH t, collect([tm.name, df]) AS matched
RETURN t.id AS id, coalesce(t.term_count, 0) AS term_count, coalesce(t.completed_at, '') AS completed_at,
       matched, [(t)-[:HANDED_OFF]->(:Handoff)-[:MODIFIED|CREATED]->(f:File) | f.path] AS files
ORDER BY id
