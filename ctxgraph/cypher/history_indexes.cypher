// Which of the full-text indexes $names exist (a read-only store on a graph
// written before the history's text indexes may lack them).
SHOW FULLTEXT INDEXES
YIELD name
WHERE name IN $names
RETURN name
