// Create or update an indexed project's record ($props: id, root, indexed_at, ...).
MERGE (p:Project {id: $props.id})
SET p = $props
