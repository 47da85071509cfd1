// Record the new stat of files of project $project whose content is unchanged
// ($rows: path, mtime_ns, size; a checkout or a touch moved their mtime).
UNWIND $rows AS row
MATCH (c:Chunk {project: $project, path: row.path})
SET c.file_mtime_ns = row.mtime_ns, c.file_size = row.size
