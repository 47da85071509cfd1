// How many tasks have a vector of their text.
MATCH (t:Task)
WHERE t.embedding IS NOT NULL
RETURN count(t) AS n
