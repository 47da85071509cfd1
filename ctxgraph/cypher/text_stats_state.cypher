// Whether the statistics of the full-text indexes are kept (a Corpus node, or
// nothing to count yet), or the graph was written by a ctxgraph that did not
// keep them (documents but no Corpus node): then they are counted from zero.
RETURN EXISTS { MATCH (c:Corpus) } OR NOT (EXISTS { MATCH (t:Task) WHERE t.doc IS NOT NULL }
       OR EXISTS { MATCH (f:File) WHERE f.doc IS NOT NULL }) AS kept
