// Knowledge sharing a tag of $weighted ([[tag, rarity weight], ...], only the
// tags under the degree cap): the highest sum of matched weights first, then
// the most recently updated, then id.
UNWIND $weighted AS w
MATCH (tag:Tag {name: w[0]})<-[:TAGGED]-(k:Knowledge)
WITH k, collect(tag.name) AS matched, round(sum(w[1]), 9) AS score
RETURN properties(k) AS props, matched
ORDER BY score DESC, coalesce(k.updated_at, '') DESC, k.id ASC
LIMIT $limit
