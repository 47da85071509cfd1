// Knowledge discovered by a handoff ($rows: [{label, props}]): merged by id,
// tags unioned (existing first), linked to the handoff and to its tags.
MATCH (h:Handoff {id: $handoff_id})
UNWIND $rows AS row
MERGE (k:Knowledge {id: row.props.id})
WITH h, k, row, k.created_at AS old_created, coalesce(k.tags, []) AS old_tags
SET k = row.props
SET k:$(row.label)
SET k.created_at = coalesce(old_created, row.props.created_at),
    k.tags = old_tags + [name IN row.props.tags WHERE NOT name IN old_tags]
MERGE (h)-[:DISCOVERED]->(k)
WITH k, row
CALL (k, row) {
  UNWIND row.props.tags AS name
  MERGE (tag:Tag {name: name})
    ON CREATE SET tag.id = name
  MERGE (k)-[:TAGGED]->(tag)
}
RETURN count(k) AS written
