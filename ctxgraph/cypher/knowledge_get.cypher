// Knowledge nodes by id.
UNWIND $ids AS id
MATCH (k:Knowledge {id: id})
RETURN properties(k) AS props
ORDER BY k.id
