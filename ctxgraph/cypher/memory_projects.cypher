// Every indexed project, by id.
MATCH (p:Project)
RETURN p {.*} AS project
ORDER BY p.id
