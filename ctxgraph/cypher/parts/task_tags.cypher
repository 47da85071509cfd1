// Part of task_upsert, task_signals_write and history_tags: the task t (of
// its row) linked to its tags (row.tags) instead of its old ones, the Tag
// nodes made when new.
CALL (t) {
  MATCH (t)-[old:TAGGED]->(:Tag)
  DELETE old
}
CALL (t, row) {
  UNWIND row.tags AS name
  MERGE (tag:Tag {name: name})
    ON CREATE SET tag.id = name
  MERGE (t)-[:TAGGED]->(tag)
}
