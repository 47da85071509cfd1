// Files named by a handoff: created when missing (with their terms); notes
// filled only when empty (terms stay as they were).
UNWIND $rows AS row
MERGE (f:File {path: row.path})
  ON CREATE SET f = row
  ON MATCH SET f.notes = CASE WHEN coalesce(f.notes, '') = '' AND row.notes <> ''
                              THEN row.notes ELSE f.notes END
WITH f
CALL (f) {
  UNWIND coalesce(f.terms, []) AS name
  MERGE (term:Term {name: name})
    ON CREATE SET term.id = name
  MERGE (f)-[:MENTIONS]->(term)
}
