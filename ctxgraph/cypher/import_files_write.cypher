// An import's state of the files it read ($rows: the ImportedFile properties
// with `id` ($source:path) and `source`), and of those gone ($gone: their ids).
CALL () {
  UNWIND $gone AS id
  MATCH (f:ImportedFile {id: id})
  DELETE f
}
UNWIND $rows AS row
MERGE (f:ImportedFile {id: row.id})
SET f = row
