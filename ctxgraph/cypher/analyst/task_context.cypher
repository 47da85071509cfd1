// ctxgraph: what a task gets to see
// Task context: what one task gets to see, as a table an analyst can scan.
//   1. dependency handoff - each task it DEPENDS_ON, with that task's handoff
//      summary (or "no handoff yet");
//   2. knowledge          - patterns, gotchas, decisions and open questions
//      sharing at least one tag with the task (most shared tags first);
//      superseded decisions are marked, not hidden;
//   3. file               - files the dependencies' handoffs created, modified
//      or said to read next, files its own handoff touched, and files sharing
//      one of its tags.
// Set first:  :param task_id => 'task-015'  (the script "ctxgraph: 0. set the task to look at")
MATCH (t:Task {id: $task_id})
CALL (t) {
  MATCH (t)-[:DEPENDS_ON]->(dep:Task)
  OPTIONAL MATCH (dep)-[:HANDED_OFF]->(h:Handoff)
  RETURN 1 AS part, 'dependency handoff' AS section, dep.id AS id,
         coalesce(dep.status, '') AS kind,
         coalesce(h.summary, '(no handoff yet)') AS text,
         coalesce(dep.name, '') AS detail, 0 AS weight
  UNION ALL
  MATCH (t)-[:TAGGED]->(tag:Tag)<-[:TAGGED]-(k:Pattern|Gotcha|Decision|OpenQuestion)
  WITH k, collect(tag.name) AS shared
  RETURN 2 AS part, 'knowledge' AS section, k.id AS id,
         [l IN labels(k) WHERE l IN ['Pattern', 'Gotcha', 'Decision', 'OpenQuestion']][0]
           + CASE WHEN k:Gotcha THEN ' (' + coalesce(k.severity, '?') + ')'
                  WHEN k:OpenQuestion AND k.blocking THEN ' (blocking)'
                  WHEN k:Decision AND k.status = 'superseded' THEN ' (superseded)'
                  ELSE '' END AS kind,
         coalesce(k.summary, '') AS text,
         'shared tags: ' + reduce(s = '', n IN shared | s + CASE s WHEN '' THEN '' ELSE ', ' END + n) AS detail,
         size(shared) AS weight
  UNION ALL
  MATCH (t)-[:DEPENDS_ON]->(dep:Task)-[:HANDED_OFF]->(:Handoff)-[r:CREATED|MODIFIED|READ_NEXT]->(f:File)
  RETURN 3 AS part, 'file' AS section, f.path AS id,
         toLower(type(r)) + ' by ' + dep.id AS kind,
         coalesce(r.reason, r.purpose, f.notes, '') AS text,
         coalesce(f.component, '') AS detail, 2 AS weight
  UNION ALL
  MATCH (t)-[:HANDED_OFF]->(:Handoff)-[r:CREATED|MODIFIED]->(f:File)
  RETURN 3 AS part, 'file' AS section, f.path AS id,
         toLower(type(r)) + ' by this task' AS kind,
         coalesce(r.purpose, f.notes, '') AS text,
         coalesce(f.component, '') AS detail, 1 AS weight
  UNION ALL
  MATCH (t)-[:TAGGED]->(tag:Tag)<-[:TAGGED]-(f:File)
  WITH f, collect(tag.name) AS shared
  RETURN 3 AS part, 'file' AS section, f.path AS id,
         'shares tags' AS kind, coalesce(f.notes, '') AS text,
         coalesce(f.component, '') + ' [' + reduce(s = '', n IN shared | s + CASE s WHEN '' THEN '' ELSE ', ' END + n) + ']' AS detail,
         0 AS weight
}
RETURN section, id, kind, text, detail
ORDER BY part, weight DESC, id, kind
