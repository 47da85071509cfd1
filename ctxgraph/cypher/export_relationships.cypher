// Every relationship, for an export: type, both ends as (labels less
// Knowledge and the derived Completed, id) and its properties. Sorted by the caller.
MATCH (a)-[r]->(b)
RETURN type(r) AS type,
       [label IN labels(a) WHERE NOT label IN ['Knowledge', 'Completed']] AS src_labels, a.id AS src_id,
       [label IN labels(b) WHERE NOT label IN ['Knowledge', 'Completed']] AS dst_labels, b.id AS dst_id,
       properties(r) AS props
