// Tasks blocked now, oldest block first.
MATCH (t:Task {status: 'blocked'})
RETURN t.id AS id, coalesce(t.blocked_reason, '') AS reason, t.blocked_at AS since
ORDER BY coalesce(t.blocked_at, ''), t.id
