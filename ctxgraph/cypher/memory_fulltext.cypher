// The chunks of project $project best matching $query (Lucene BM25 over
// search_text, whitespace-analyzed terms), best first: the $fetch best chunks
// of every project, those of $project kept ($k at most), and how many the
// index returned (fewer than $fetch: there are no more).
CALL db.index.fulltext.queryNodes('chunk_text', $query, {limit: $fetch}) YIELD node, score
// include: chunk_hits
