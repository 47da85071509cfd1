// The last $n finished tasks (completed or failed), newest first.
MATCH (t:Task)
WHERE t.status IN ['completed', 'failed']
RETURN properties(t) AS props
ORDER BY coalesce(t.completed_at, '') DESC, t.id DESC
LIMIT $n
