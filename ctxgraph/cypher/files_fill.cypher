// Files named by a handoff batch, merged in Python (handoff_batch.merge_file,
// after files_lock): $rows [{props, terms_changed}], the properties added to
// the node's (the derived history stays for files_refresh); a file whose
// terms changed has its new ones made as Term nodes.
UNWIND $rows AS row
MATCH (f:File {path: row.props.path})
SET f += row.props
WITH f, row
CALL (f, row) {
  WITH * WHERE row.terms_changed
  UNWIND coalesce(f.terms, []) AS name
  // include: term_node
}
