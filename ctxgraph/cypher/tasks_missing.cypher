// The ids among $ids that name no Task.
UNWIND $ids AS id
OPTIONAL MATCH (t:Task {id: id})
WITH id, t
WHERE t IS NULL
RETURN id
