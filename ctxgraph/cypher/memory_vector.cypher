// The chunks of project $project nearest to $vector (cosine), best first: the
// $fetch nearest chunks of every project, those of $project kept ($k at most),
// and how many the index returned (fewer than $fetch: there are no more).
// The index scores (1 + cosine) / 2; the caller converts it back.
CALL db.index.vector.queryNodes('chunk_embedding', $fetch, $vector) YIELD node, score
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
