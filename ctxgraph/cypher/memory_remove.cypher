// Forget the chunks of files of project $project ($paths: deleted or changed files).
UNWIND $paths AS path
MATCH (c:Chunk {project: $project, path: path})
DETACH DELETE c
