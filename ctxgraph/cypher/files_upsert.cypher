// Context-map entries: create, or overwrite component, notes and terms. The
// derived history (touches, task_len, doc) is kept for files_refresh, run in
// the same transaction, to recount: an unchanged document is not rewritten in
// the file_text index.
UNWIND $rows AS row
MERGE (f:File {path: row.path})
SET f = row {.*, touches: f.touches, task_len: f.task_len, doc: f.doc}
WITH f, row
CALL (f, row) {
  UNWIND row.terms AS name
  // include: term_node
}
