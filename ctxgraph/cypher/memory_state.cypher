// An indexed project ($project) and the hash each of its files had when indexed.
OPTIONAL MATCH (p:Project {id: $project})
CALL (p) {
  OPTIONAL MATCH (c:Chunk {project: $project})
  WITH c.path AS path, c.file_sha256 AS sha
  WHERE path IS NOT NULL
  RETURN collect(DISTINCT [path, sha]) AS hashes
}
RETURN p {.*} AS project, hashes
