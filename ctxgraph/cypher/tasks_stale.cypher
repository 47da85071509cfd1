// Up to $batch tasks whose task_text document (`doc`) or Completed label is
// missing or wrong (written by a ctxgraph that did not keep them): their ids,
// for tasks_doc.
CALL () {
  MATCH (t:Task {status: 'completed'})
  WHERE t.doc IS NULL OR NOT t:Completed
  RETURN t.id AS id
  UNION
  MATCH (t:Completed)
  WHERE coalesce(t.status, '') <> 'completed'
  RETURN t.id AS id
}
RETURN id
LIMIT $batch
