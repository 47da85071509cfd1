// Per handoff of a batch ($rows: [{task_id, id}]): does its task exist, and
// which content does the handoff have now (null: none)?
UNWIND $rows AS row
OPTIONAL MATCH (t:Task {id: row.task_id})
OPTIONAL MATCH (h:Handoff {id: row.id})
RETURN row.task_id AS task_id, row.id AS id, t IS NOT NULL AS task_exists, h.content_hash AS content_hash
