// The vectors of the chunks of files $paths of project $project, with each
// chunk's text hash (a changed file's unchanged chunks keep theirs).
UNWIND $paths AS path
MATCH (c:Chunk {project: $project, path: path})
WHERE c.embedding IS NOT NULL
RETURN c.path AS path, c.text_hash AS text_hash, c.embedding AS embedding
