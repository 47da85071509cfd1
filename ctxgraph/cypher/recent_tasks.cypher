// The last $n finished tasks (completed or failed), newest first: read in
// completed_at order from its index and stopped after $n; finished tasks
// without a completion time come last, read only if there are too few.
CALL () {
  MATCH (t:Task)
  USING INDEX t:Task(completed_at)
  WHERE t.completed_at > '' AND t.status IN ['completed', 'failed']
  WITH t ORDER BY t.completed_at DESC, t.id DESC
  LIMIT $n
  RETURN collect(properties(t)) AS dated
}
CALL (dated) {
  UNWIND CASE WHEN size(dated) < $n THEN ['completed', 'failed'] ELSE [] END AS status
  MATCH (t:Task {status: status})
  WHERE coalesce(t.completed_at, '') = ''
  WITH t ORDER BY t.id DESC
  RETURN collect(properties(t)) AS undated
}
UNWIND dated + undated[..($n - size(dated))] AS props
RETURN props
