// Knowledge sharing a tag with $tags: most matched tags first, then the most
// recently updated, then id.
MATCH (tag:Tag)<-[:TAGGED]-(k:Knowledge)
WHERE tag.name IN $tags
WITH k, collect(tag.name) AS matched
RETURN properties(k) AS props, matched
ORDER BY size(matched) DESC, coalesce(k.updated_at, '') DESC, k.id ASC
LIMIT $limit
