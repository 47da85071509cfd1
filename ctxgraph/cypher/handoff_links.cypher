// Links from handoffs to files ($rows: [{handoff_id, rel, path, props}]), rel
// one of CREATED, MODIFIED, READ_NEXT. One static MERGE per type: a dynamic
// relationship type in MERGE takes the first row's type for every row on 5.26.
UNWIND $rows AS row
MATCH (h:Handoff {id: row.handoff_id})
MATCH (f:File {path: row.path})
CALL (h, f, row) {
  WITH * WHERE row.rel = 'CREATED'
  MERGE (h)-[r:CREATED]->(f)
  SET r = row.props
}
CALL (h, f, row) {
  WITH * WHERE row.rel = 'MODIFIED'
  MERGE (h)-[r:MODIFIED]->(f)
  SET r = row.props
}
CALL (h, f, row) {
  WITH * WHERE row.rel = 'READ_NEXT'
  MERGE (h)-[r:READ_NEXT]->(f)
  SET r = row.props
}
