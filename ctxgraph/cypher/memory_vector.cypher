// The chunks of project $project nearest to $vector (cosine), best first: the
// $fetch nearest chunks of every project, those of $project kept ($k at most),
// and how many the index returned (fewer than $fetch: there are no more).
// The index scores (1 + cosine) / 2; the caller converts it back.
CALL db.index.vector.queryNodes('chunk_embedding', $fetch, $vector) YIELD node, score
// include: chunk_hits
