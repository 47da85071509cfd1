// Part of task_upsert: the Term nodes of the task's full-text terms
// (row.props.terms) made when new; tasks_doc counts their task_df.
CALL (row) {
  UNWIND coalesce(row.props.terms, []) AS name
  MERGE (term:Term {name: name})
    ON CREATE SET term.id = name
}
