// Knowledge added or revised by hand ($rows: [{label, props}]): merged by id,
// tags unioned (existing first) and linked.
UNWIND $rows AS row
MERGE (k:Knowledge {id: row.props.id})
WITH k, row, k.created_at AS old_created, coalesce(k.tags, []) AS old_tags
SET k = row.props
SET k:$(row.label)
SET k.created_at = coalesce(old_created, row.props.created_at),
    k.tags = old_tags + [name IN row.props.tags WHERE NOT name IN old_tags]
// include: tag_links
