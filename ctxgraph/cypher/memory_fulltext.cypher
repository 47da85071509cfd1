// The chunks of project $project best matching $query (Lucene BM25 over
// search_text, whitespace-analyzed terms), best first.
CALL db.index.fulltext.queryNodes('chunk_text', $query, {limit: $fetch}) YIELD node, score
WHERE node.project = $project
RETURN node {.path, .start_line, .end_line, .text, .text_hash, .token_estimate, .file_sha256} AS chunk, score
ORDER BY score DESC, chunk.path, chunk.start_line
LIMIT $k
