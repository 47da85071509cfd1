// Delete the knowledge an import no longer finds ($ids), with its
// relationships and its code anchors (ctxgraph.sources; docs/knowledge-import.md).
CALL () {
  UNWIND $ids AS id
  MATCH (a:Anchor {owner: id})
  DELETE a
}
UNWIND $ids AS id
MATCH (k:Knowledge {id: id})
DETACH DELETE k
