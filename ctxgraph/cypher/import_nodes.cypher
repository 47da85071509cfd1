// Nodes of an import ($rows: [{label, id, props}]): merged by their label's
// key, properties replaced whole. Knowledge nodes ($knowledge_labels) are
// merged on the shared Knowledge label (its id constraint) and given their
// specific label; File is keyed by path, Tag and Term by name (props.id
// holds the same value). A task keeps the vectors of its text (exports leave
// vectors out; embedding_hash and query_hash tell whether they are still of
// this text) and its task_text document, and a term its document
// frequencies: the recount after the import (tasks_doc, files_refresh) sets
// the documents, the Completed labels and the statistics of the full-text
// indexes.
UNWIND $rows AS row
CALL (row) {
  WITH * WHERE row.label = 'Task'
  MERGE (n:Task {id: row.id})
  WITH n, row.props AS props, n.embedding AS old_vector, n.embedding_hash AS old_hash,
       n.query_vector AS old_query, n.query_hash AS old_query_hash, n.doc AS old_doc
  SET n = props {.*, doc: old_doc}
  SET n.embedding = old_vector, n.embedding_hash = old_hash, n.query_vector = old_query,
      n.query_hash = old_query_hash
}
CALL (row) {
  WITH * WHERE row.label = 'Handoff'
  MERGE (n:Handoff {id: row.id})
  SET n = row.props
}
CALL (row) {
  WITH * WHERE row.label IN $knowledge_labels
  MERGE (n:Knowledge {id: row.id})
  SET n = row.props
  SET n:$(row.label)
}
CALL (row) {
  WITH * WHERE row.label = 'File'
  MERGE (n:File {path: row.id})
  SET n = row.props
}
CALL (row) {
  WITH * WHERE row.label = 'Tag'
  MERGE (n:Tag {name: row.id})
  SET n = row.props
}
CALL (row) {
  WITH * WHERE row.label = 'Term'
  MERGE (n:Term {name: row.id})
  WITH n, row.props AS props, n.task_df AS task_df, n.file_df AS file_df
  SET n = props {.*, task_df: task_df, file_df: file_df}
}
CALL (row) {
  WITH * WHERE row.label = 'Chunk'
  MERGE (n:Chunk {id: row.id})
  SET n = row.props
}
CALL (row) {
  WITH * WHERE row.label = 'Project'
  MERGE (n:Project {id: row.id})
  SET n = row.props
}
RETURN count(row) AS written
