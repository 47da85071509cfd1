// Keep the newest $keep deliveries (by time, then id): delete the rest.
MATCH (d:Delivery)
WITH d ORDER BY d.at DESC, d.id DESC
SKIP $keep
DETACH DELETE d
RETURN count(*) AS deleted
