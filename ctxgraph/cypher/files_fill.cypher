// Files named by a handoff: created when missing; notes filled only when empty.
UNWIND $rows AS row
MERGE (f:File {path: row.path})
  ON CREATE SET f = row
  ON MATCH SET f.notes = CASE WHEN coalesce(f.notes, '') = '' AND row.notes <> ''
                              THEN row.notes ELSE f.notes END
