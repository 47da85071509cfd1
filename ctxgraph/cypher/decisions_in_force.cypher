// Every decision not superseded, in id order (ctxgraph conflicts; docs/decisions.md).
MATCH (k:Decision)
WHERE coalesce(k.status, 'active') <> 'superseded'
RETURN properties(k) AS props
ORDER BY k.id
