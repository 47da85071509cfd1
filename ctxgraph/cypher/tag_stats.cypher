// Degree of each tag of $tags (from the degree store), and the taggable items
// (tasks and knowledge, from the count store): the evidence of the tag rarity.
CALL () {
  UNWIND $tags AS name
  WITH DISTINCT name
  MATCH (tag:Tag {name: name})
  RETURN collect([name, COUNT { (tag)<-[:TAGGED]-() }]) AS dfs
}
RETURN dfs, COUNT { (:Task) } + COUNT { (:Knowledge) } AS total
