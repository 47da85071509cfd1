// Completed tasks sharing a tag with $tags (not those in $exclude).
MATCH (tag:Tag)<-[:TAGGED]-(t:Task)
WHERE tag.name IN $tags AND t.status = 'completed' AND NOT t.id IN $exclude
WITH t, collect(tag.name) AS matched
RETURN properties(t) AS props, matched, [(t)-[:DEPENDS_ON]->(d:Task) | d.id] AS deps
ORDER BY size(matched) DESC, coalesce(t.completed_at, '') DESC, t.id ASC
LIMIT $limit
