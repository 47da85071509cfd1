// Tasks of any status sharing a tag of $weighted ([[tag, rarity weight], ...],
// only the tags under the degree cap), for `ctxgraph search`: as
// knowledge_by_tags orders knowledge, the highest sum of matched weights
// first, then the most recently updated, then id; each with its dependencies.
UNWIND $weighted AS w
MATCH (tag:Tag {name: w[0]})<-[:TAGGED]-(t:Task)
WITH t, collect(w[0]) AS matched, round(sum(w[1]), 9) AS score
RETURN properties(t) AS props, matched, [(t)-[:DEPENDS_ON]->(d:Task) | d.id] AS deps
ORDER BY score DESC, coalesce(t.updated_at, '') DESC, t.id ASC
LIMIT $limit
