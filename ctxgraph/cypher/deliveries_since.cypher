// The newest $last deliveries (null: all) made at or after $since, newest first.
MATCH (d:Delivery)
WHERE d.at >= $since
WITH d ORDER BY d.at DESC, d.id DESC
LIMIT coalesce($last, 9223372036854775807)
RETURN d.id AS id, d.task_id AS task_id, d.at AS at, d.record AS record, d.score AS score
