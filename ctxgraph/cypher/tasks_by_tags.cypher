// Completed tasks sharing a tag of $weighted ([[tag, rarity weight], ...], only
// the tags under the degree cap), not those in $exclude: the highest sum of
// matched weights first, then the most recently completed, then id.
UNWIND $weighted AS w
MATCH (tag:Tag {name: w[0]})<-[:TAGGED]-(t:Task)
WHERE t.status = 'completed' AND NOT t.id IN $exclude
WITH t, collect(tag.name) AS matched, round(sum(w[1]), 9) AS score
RETURN properties(t) AS props, matched, [(t)-[:DEPENDS_ON]->(d:Task) | d.id] AS deps
ORDER BY score DESC, coalesce(t.completed_at, '') DESC, t.id ASC
LIMIT $limit
