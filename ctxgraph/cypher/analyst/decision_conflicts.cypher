// ctxgraph: likely conflicting decisions
// Pairs of decisions in force (not superseded: a revised decision's older versions are)
// sharing at least 3 tags with a Jaccard similarity of their tags of at least
// 0.4, whose texts' words have a Jaccard similarity under 0.8 (at or over it,
// one restates the other): `ctxgraph conflicts`'s rule (ctxgraph/compute/conflicts.py,
// docs/decisions.md). Words: the text lower-cased, split at blanks and , . ; : ( ) [ ] ! ? " ' /.
// Parameters: none.
MATCH (a:Decision)-[:TAGGED]->(t:Tag)<-[:TAGGED]-(b:Decision)
WHERE a.id < b.id
  AND coalesce(a.status, 'active') <> 'superseded' AND coalesce(b.status, 'active') <> 'superseded'
WITH a, b, collect(t.name) AS shared
WHERE size(shared) >= 3
WITH a, b, shared, toFloat(size(shared)) / (size(a.tags) + size(b.tags) - size(shared)) AS tag_similarity
WHERE tag_similarity >= 0.4
WITH a, b, shared, tag_similarity,
     [w IN split(toLower(a.summary), [' ', '\t', '\n', '\r', ',', '.', ';', ':', '(', ')', '[', ']', '!', '?', '"', "'", '/']) WHERE w <> ''] AS wa,
     [w IN split(toLower(b.summary), [' ', '\t', '\n', '\r', ',', '.', ';', ':', '(', ')', '[', ']', '!', '?', '"', "'", '/']) WHERE w <> ''] AS wb
WITH a, b, shared, tag_similarity,
     reduce(s = [], w IN wa | CASE WHEN w IN s THEN s ELSE s + w END) AS wa,
     reduce(s = [], w IN wb | CASE WHEN w IN s THEN s ELSE s + w END) AS wb
WITH a, b, shared, tag_similarity, size([w IN wa WHERE w IN wb]) AS common, size(wa) + size(wb) AS total
WITH a, b, shared, tag_similarity,
     CASE WHEN total - common = 0 THEN 0.0 ELSE toFloat(common) / (total - common) END AS text_similarity
WHERE text_similarity < 0.8
RETURN a.id AS first_id, a.summary AS first, b.id AS second_id, b.summary AS second,
       COLLECT { UNWIND shared AS s RETURN s ORDER BY s } AS shared_tags,
       round(tag_similarity, 4) AS tag_similarity, round(text_similarity, 4) AS text_similarity
ORDER BY tag_similarity DESC, first_id, second_id
