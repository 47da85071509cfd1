// The files a handoff batch names ($paths, sorted), each locked before it is
// read and created bare when missing (as knowledge_lock); their properties go
// through handoff_batch.merge_file, and files_fill writes the result (the
// entry's properties only: not the derived history, `doc` maybe long).
UNWIND $paths AS path
MERGE (f:File {path: path})
SET f.path = f.path
RETURN f {.id, .path, .component, .notes, .terms, .in_map, .noted_at} AS props
