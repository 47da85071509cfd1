// Node counts per label (the shared Knowledge label and the derived Completed
// label left out, the deliveries log: ctxgraph.outcomes.records, and the
// full-text statistics, Corpus, the code anchors, Anchor, the state of an
// import of the project's files, ImportedFile, and the records of imported
// histories, HistorySource).
MATCH (n)
UNWIND labels(n) AS label
WITH label WHERE NOT label IN ['Knowledge', 'Completed', 'Delivery', 'Corpus', 'Anchor', 'ImportedFile', 'HistorySource']
RETURN label, count(*) AS count
ORDER BY label
