// Part of knowledge_merge and knowledge_upsert: each written item k (of its
// row) linked to its tags, the Tag nodes made when new; how many were written.
WITH k, row
CALL (k, row) {
  UNWIND row.props.tags AS name
  MERGE (tag:Tag {name: name})
    ON CREATE SET tag.id = name
  MERGE (k)-[:TAGGED]->(tag)
}
RETURN count(k) AS written
