// Every node, for an export: its labels less the shared Knowledge label (one
// specific label is expected) and its properties. Sorted by the caller.
MATCH (n)
RETURN [label IN labels(n) WHERE label <> 'Knowledge'] AS labels, properties(n) AS props
