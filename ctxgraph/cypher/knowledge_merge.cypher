// Knowledge discovered by handoffs ($rows: [{label, props}], one per id):
// merged by id, tags unioned (existing first), linked to its tags.
UNWIND $rows AS row
MERGE (k:Knowledge {id: row.props.id})
WITH k, row, k.created_at AS old_created, coalesce(k.tags, []) AS old_tags
SET k = row.props
SET k:$(row.label)
SET k.created_at = coalesce(old_created, row.props.created_at),
    k.tags = old_tags + [name IN row.props.tags WHERE NOT name IN old_tags]
WITH k, row
CALL (k, row) {
  UNWIND row.props.tags AS name
  MERGE (tag:Tag {name: name})
    ON CREATE SET tag.id = name
  MERGE (k)-[:TAGGED]->(tag)
}
RETURN count(k) AS written
