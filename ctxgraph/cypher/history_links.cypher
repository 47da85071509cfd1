// Link the handoffs an import just created to the files they created or
// modified ($rows: [{path, links: [{handoff_id, rel, props}]}], paths sorted):
// new handoffs, so new links, created (handoff_links merges them).
UNWIND $rows AS row
MATCH (f:File {path: row.path})
UNWIND row.links AS link
MATCH (h:Handoff {id: link.handoff_id})
CALL (h, f, link) {
  WITH * WHERE link.rel = 'CREATED'
  CREATE (h)-[r:CREATED]->(f)
  SET r = link.props
}
CALL (h, f, link) {
  WITH * WHERE link.rel = 'MODIFIED'
  CREATE (h)-[r:MODIFIED]->(f)
  SET r = link.props
}
