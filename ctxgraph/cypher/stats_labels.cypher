// Node counts per label (the shared Knowledge label and the derived Completed
// label left out, the deliveries log: ctxgraph.outcomes.records, and the
// full-text statistics, Corpus, and the code anchors, Anchor).
MATCH (n)
UNWIND labels(n) AS label
WITH label WHERE NOT label IN ['Knowledge', 'Completed', 'Delivery', 'Corpus', 'Anchor']
RETURN label, count(*) AS count
ORDER BY label
