// Up to $batch files never recounted (written before `touches` was kept on
// File, or imported): their paths, for files_refresh.
MATCH (f:File)
WHERE f.touches IS NULL
RETURN f.path AS path
LIMIT $batch
