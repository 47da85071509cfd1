// Node counts per label (the shared Knowledge label left out, and the
// deliveries log: ctxgraph.graph.outcome_records).
MATCH (n)
UNWIND labels(n) AS label
WITH label WHERE label <> 'Knowledge' AND label <> 'Delivery'
RETURN label, count(*) AS count
ORDER BY label
