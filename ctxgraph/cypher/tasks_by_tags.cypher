// Completed tasks sharing a tag of $weighted ([[tag, rarity weight], ...], only
// the tags under the degree cap), not those in $exclude: the highest sum of
// matched weights first, then the most recently completed, then id. As in
// gather.cypher: finished tasks by their label, the excluded ones as nodes, and
// the tie-breaking properties read only for the tasks scoring at least the
// $limit-th best.
CALL () {
  OPTIONAL MATCH (x:Task) WHERE x.id IN $exclude
  RETURN collect(x) AS excluded
}
UNWIND $weighted AS w
MATCH (tag:Tag {name: w[0]})<-[:TAGGED]-(t:Completed)
WHERE NOT t IN excluded
WITH t, collect(w[0]) AS matched, round(sum(w[1]), 9) AS score
ORDER BY score DESC
WITH collect({t: t, matched: matched, score: score}) AS ranked
WITH ranked, ranked[$limit - 1].score AS floor
UNWIND ranked AS x
WITH x WHERE floor IS NULL OR x.score >= floor
WITH x.t AS t, x.matched AS matched, x.score AS score
RETURN properties(t) AS props, matched, [(t)-[:DEPENDS_ON]->(d:Task) | d.id] AS deps
ORDER BY score DESC, coalesce(t.completed_at, '') DESC, t.id ASC
LIMIT $limit
