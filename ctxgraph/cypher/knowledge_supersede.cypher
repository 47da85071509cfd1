// A newer item supersedes an older one ($pairs: [{new, old, at}]): the edge; the
// old item holds from its created_at until the earliest `at` that superseded
// it (valid_from, valid_until); an old decision's status becomes superseded.
// (graph/local/writes.py's _supersede does the same.)
UNWIND $pairs AS pair
MATCH (n:Knowledge {id: pair.new}), (o:Knowledge {id: pair.old})
MERGE (n)-[:SUPERSEDES]->(o)
SET o.status = CASE WHEN o:Decision THEN 'superseded' ELSE o.status END,
    o.valid_from = coalesce(o.valid_from, o.created_at),
    o.valid_until = CASE WHEN o.valid_until IS NULL OR pair.at < o.valid_until THEN pair.at ELSE o.valid_until END
