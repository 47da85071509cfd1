// Node counts per label (the shared Knowledge label left out).
MATCH (n)
UNWIND labels(n) AS label
WITH label WHERE label <> 'Knowledge'
RETURN label, count(*) AS count
ORDER BY label
