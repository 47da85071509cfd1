// Keep the newest deliveries (by time, then id): delete the $excess oldest
// (the count less the number kept), read in time order from the delivery_at
// index and stopped there — not a sort of the whole log. (`at` is always set.)
MATCH (d:Delivery)
WHERE d.at IS NOT NULL
WITH d ORDER BY d.at ASC, d.id ASC
LIMIT $excess
DETACH DELETE d
RETURN count(*) AS deleted
