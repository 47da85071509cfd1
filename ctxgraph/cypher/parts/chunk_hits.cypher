// Part of memory_fulltext and memory_vector: of the index's hits (node, score),
// those of $project ($k at most) with their chunk's properties, and how many came.
WITH collect({node: node, score: score}) AS found
CALL (found) {
  UNWIND found AS f
  WITH f.node AS n, f.score AS score
  WHERE n.project = $project
  WITH n, score
  LIMIT $k
  RETURN collect({chunk: n {.path, .start_line, .end_line, .text, .text_hash, .token_estimate, .file_sha256,
                           .file_mtime_ns, .file_size},
                  score: score}) AS hits
}
RETURN size(found) AS fetched, hits
