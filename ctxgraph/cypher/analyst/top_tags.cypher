// ctxgraph: most connected tags
// The most connected tags: how many tasks, knowledge items (patterns, gotchas,
// decisions, open questions) and files carry each tag; top 25.
// Parameters: none (edit the LIMIT to see more).
MATCH (tag:Tag)
WITH tag,
     COUNT { (tag)<-[:TAGGED]-(:Task) } AS tasks,
     COUNT { (tag)<-[:TAGGED]-(:Pattern|Gotcha|Decision|OpenQuestion) } AS knowledge,
     COUNT { (tag)<-[:TAGGED]-(:File) } AS files
RETURN tag.name AS tag, tasks + knowledge + files AS connections, tasks, knowledge, files
ORDER BY connections DESC, tag
LIMIT 25
