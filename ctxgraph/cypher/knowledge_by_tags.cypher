// Knowledge sharing a tag of $weighted ([[tag, rarity weight], ...], only the
// tags under the degree cap): the highest sum of matched weights first, then
// the most recently updated, then id. As in gather.cypher, the tie-breaking
// properties are read only for the items scoring at least the $limit-th best.
UNWIND $weighted AS w
// include: knowledge_by_weight
WITH ranked, ranked[$limit - 1].score AS floor
UNWIND ranked AS x
WITH x WHERE floor IS NULL OR x.score >= floor
WITH x.k AS k, x.matched AS matched, x.score AS score
RETURN properties(k) AS props, matched
ORDER BY score DESC, coalesce(k.updated_at, '') DESC, k.id ASC
LIMIT $limit
