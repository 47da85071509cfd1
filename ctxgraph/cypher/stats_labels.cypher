// Node counts per label (the shared Knowledge label and the derived Completed
// label left out, and the deliveries log: ctxgraph.graph.outcome_records).
MATCH (n)
UNWIND labels(n) AS label
WITH label WHERE NOT label IN ['Knowledge', 'Completed', 'Delivery']
RETURN label, count(*) AS count
ORDER BY label
