// Relationships of an import ($rows: [{n, type, src: [label, id], dst: [label,
// id], props}]): both ends looked up by their label's key, the relationship
// merged and its properties replaced. One static MERGE per type: a dynamic
// relationship type in MERGE takes the first row's type for every row on
// 5.26. Returns the numbers (n) of the rows whose ends were both found.
UNWIND $rows AS row
CALL (row) {
  MATCH (n:Task {id: row.src[1]}) WHERE row.src[0] = 'Task' RETURN n AS a
  UNION ALL
  MATCH (n:Handoff {id: row.src[1]}) WHERE row.src[0] = 'Handoff' RETURN n AS a
  UNION ALL
  MATCH (n:Knowledge {id: row.src[1]}) WHERE row.src[0] IN labels(n) RETURN n AS a
  UNION ALL
  MATCH (n:File {path: row.src[1]}) WHERE row.src[0] = 'File' RETURN n AS a
  UNION ALL
  MATCH (n:Tag {name: row.src[1]}) WHERE row.src[0] = 'Tag' RETURN n AS a
  UNION ALL
  MATCH (n:Term {name: row.src[1]}) WHERE row.src[0] = 'Term' RETURN n AS a
  UNION ALL
  MATCH (n:Chunk {id: row.src[1]}) WHERE row.src[0] = 'Chunk' RETURN n AS a
  UNION ALL
  MATCH (n:Project {id: row.src[1]}) WHERE row.src[0] = 'Project' RETURN n AS a
}
CALL (row) {
  MATCH (n:Task {id: row.dst[1]}) WHERE row.dst[0] = 'Task' RETURN n AS b
  UNION ALL
  MATCH (n:Handoff {id: row.dst[1]}) WHERE row.dst[0] = 'Handoff' RETURN n AS b
  UNION ALL
  MATCH (n:Knowledge {id: row.dst[1]}) WHERE row.dst[0] IN labels(n) RETURN n AS b
  UNION ALL
  MATCH (n:File {path: row.dst[1]}) WHERE row.dst[0] = 'File' RETURN n AS b
  UNION ALL
  MATCH (n:Tag {name: row.dst[1]}) WHERE row.dst[0] = 'Tag' RETURN n AS b
  UNION ALL
  MATCH (n:Term {name: row.dst[1]}) WHERE row.dst[0] = 'Term' RETURN n AS b
  UNION ALL
  MATCH (n:Chunk {id: row.dst[1]}) WHERE row.dst[0] = 'Chunk' RETURN n AS b
  UNION ALL
  MATCH (n:Project {id: row.dst[1]}) WHERE row.dst[0] = 'Project' RETURN n AS b
}
CALL (a, b, row) {
  WITH * WHERE row.type = 'CREATED'
  MERGE (a)-[r:CREATED]->(b)
  SET r = row.props
}
CALL (a, b, row) {
  WITH * WHERE row.type = 'DEPENDS_ON'
  MERGE (a)-[r:DEPENDS_ON]->(b)
  SET r = row.props
}
CALL (a, b, row) {
  WITH * WHERE row.type = 'DISCOVERED'
  MERGE (a)-[r:DISCOVERED]->(b)
  SET r = row.props
}
CALL (a, b, row) {
  WITH * WHERE row.type = 'HANDED_OFF'
  MERGE (a)-[r:HANDED_OFF]->(b)
  SET r = row.props
}
CALL (a, b, row) {
  WITH * WHERE row.type = 'IN_FILE'
  MERGE (a)-[r:IN_FILE]->(b)
  SET r = row.props
}
CALL (a, b, row) {
  WITH * WHERE row.type = 'MODIFIED'
  MERGE (a)-[r:MODIFIED]->(b)
  SET r = row.props
}
CALL (a, b, row) {
  WITH * WHERE row.type = 'READ_NEXT'
  MERGE (a)-[r:READ_NEXT]->(b)
  SET r = row.props
}
CALL (a, b, row) {
  WITH * WHERE row.type = 'SUPERSEDES'
  MERGE (a)-[r:SUPERSEDES]->(b)
  SET r = row.props
}
CALL (a, b, row) {
  WITH * WHERE row.type = 'TAGGED'
  MERGE (a)-[r:TAGGED]->(b)
  SET r = row.props
}
RETURN collect(row.n) AS written
