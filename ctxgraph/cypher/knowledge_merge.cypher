// Knowledge discovered by handoffs, merged in Python (handoff_batch.merge_knowledge,
// after knowledge_lock): $rows [{label, props}], one per id, the node's
// properties replaced by the merged ones; linked to its tags.
UNWIND $rows AS row
MATCH (k:Knowledge {id: row.props.id})
SET k = row.props
SET k:$(row.label)
// include: tag_links
