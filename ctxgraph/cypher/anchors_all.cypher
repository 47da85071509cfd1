// Every code anchor (ctxgraph sync).
MATCH (a:Anchor)
RETURN properties(a) AS a
ORDER BY a.id
