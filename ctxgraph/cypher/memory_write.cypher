// New chunks of a project ($rows: chunk property maps with id, project and
// path), each linked to its File (files_fill creates missing files first).
UNWIND $rows AS row
MATCH (f:File {path: row.path})
MERGE (c:Chunk {id: row.id})
SET c = row
MERGE (c)-[:IN_FILE]->(f)
