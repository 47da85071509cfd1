// The whole context map.
MATCH (f:File)
RETURN properties(f) AS props
ORDER BY f.path
