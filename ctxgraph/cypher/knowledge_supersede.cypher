// A new version supersedes an old one ($pairs: [{new, old, at}]): the edge,
// and a superseded decision's status.
UNWIND $pairs AS pair
MATCH (n:Knowledge {id: pair.new}), (o:Knowledge {id: pair.old})
MERGE (n)-[:SUPERSEDES]->(o)
SET o.status = CASE WHEN o:Decision THEN 'superseded' ELSE o.status END,
    o.updated_at = pair.at
