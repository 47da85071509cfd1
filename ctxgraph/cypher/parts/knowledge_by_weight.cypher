// Part of knowledge_by_tags and gather: for each weighted tag w ([name, weight])
// the knowledge tagged with it, scored by the sum of its tags' weights, ranked
// best first (`ranked`: [{k, matched, score}]).
MATCH (tag:Tag {name: w[0]})<-[:TAGGED]-(k:Knowledge)
WITH k, collect(w[0]) AS matched, round(sum(w[1]), 9) AS score
ORDER BY score DESC
WITH collect({k: k, matched: matched, score: score}) AS ranked
