// Does the task exist, and which content does its handoff have now?
OPTIONAL MATCH (t:Task {id: $task_id})
OPTIONAL MATCH (h:Handoff {id: $id})
RETURN t IS NOT NULL AS task_exists, h.content_hash AS content_hash
