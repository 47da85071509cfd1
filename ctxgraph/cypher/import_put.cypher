// Knowledge an import writes whole ($rows: [{label, props}]): its properties
// and tags replaced by what its file says now (created_at as given). A
// decision that something outside the import supersedes (a handoff's
// decision: import_unlink removed the import's own links first) stays
// superseded, with the time it held until.
UNWIND $rows AS row
MERGE (k:Knowledge {id: row.props.id})
WITH k, row, k.valid_from AS old_from, k.valid_until AS old_until
CALL (k) {
  MATCH (k)-[r:TAGGED]->()
  DELETE r
}
WITH k, row, old_from, old_until,
     EXISTS { (:Knowledge)-[:SUPERSEDES]->(k) } AND row.label = 'Decision' AS replaced
SET k = row.props
SET k:$(row.label)
SET k.status = CASE WHEN replaced THEN 'superseded' ELSE k.status END,
    k.valid_from = CASE WHEN replaced THEN coalesce(old_from, k.created_at) ELSE k.valid_from END,
    k.valid_until = CASE WHEN replaced THEN old_until ELSE k.valid_until END
// include: tag_links
