// The deliveries of the tasks $ids, oldest first.
UNWIND $ids AS id
MATCH (d:Delivery {task_id: id})
RETURN d.id AS id, d.task_id AS task_id, d.at AS at, d.record AS record, d.score AS score
ORDER BY at, id
