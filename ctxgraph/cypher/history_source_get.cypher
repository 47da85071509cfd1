// The record of an imported history ($id): where its last complete import
// stopped (null: none). Not part of an export or of the counts.
OPTIONAL MATCH (s:HistorySource {id: $id})
RETURN properties(s) AS props
