// Create or replace the record of an imported history ($props: id, ...).
MERGE (s:HistorySource {id: $props.id})
SET s = $props
