// Every node, for an export: its labels less the shared Knowledge label and
// the derived Completed label (one specific label is expected) and its properties. Sorted by the caller. The
// deliveries log is not part of an export (ctxgraph.outcomes.records),
// nor the statistics of the full-text indexes (Corpus: derived), nor the code
// anchors, the state of an import of the project's files (Anchor, ImportedFile:
// they describe a work tree; docs/freshness.md, docs/knowledge-import.md), nor
// the records of imported histories (HistorySource: where a checkout's last
// import stopped; docs/history.md).
MATCH (n) WHERE NOT n:Delivery AND NOT n:Corpus AND NOT n:Anchor AND NOT n:ImportedFile AND NOT n:HistorySource
RETURN [label IN labels(n) WHERE NOT label IN ['Knowledge', 'Completed']] AS labels, properties(n) AS props
