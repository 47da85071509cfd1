// The chunks of project $project nearest to $vector (cosine), best first.
// The index returns (1 + cosine) / 2; the caller converts it back.
CALL db.index.vector.queryNodes('chunk_embedding', $fetch, $vector) YIELD node, score
WHERE node.project = $project
RETURN node {.path, .start_line, .end_line, .text, .text_hash, .token_estimate, .file_sha256} AS chunk, score
ORDER BY score DESC, chunk.path, chunk.start_line
LIMIT $k
