// Context-map entries: create, or overwrite component and notes.
UNWIND $rows AS row
MERGE (f:File {path: row.path})
SET f = row
