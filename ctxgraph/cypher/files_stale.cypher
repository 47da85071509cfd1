// Up to $batch files never recounted (written before `touches` was kept on
// File, or imported) or rankable without their file_text document (written
// before `doc` was kept): their paths, for files_refresh.
MATCH (f:File)
WHERE f.touches IS NULL OR (f.doc IS NULL AND coalesce(f.in_map, true))
RETURN f.path AS path
LIMIT $batch
