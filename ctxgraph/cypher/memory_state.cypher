// An indexed project ($project) and the hash and stat (mtime_ns, size) each of
// its files had when indexed.
OPTIONAL MATCH (p:Project {id: $project})
CALL (p) {
  OPTIONAL MATCH (c:Chunk {project: $project})
  WITH c.path AS path, c.file_sha256 AS sha, coalesce(c.file_mtime_ns, 0) AS mtime,
       coalesce(c.file_size, -1) AS size
  WHERE path IS NOT NULL
  RETURN collect(DISTINCT [path, sha, mtime, size]) AS hashes
}
RETURN p {.*} AS project, hashes
