// Store tasks' query vectors ($rows: [{id, hash, vector}]), each with the hash
// of the text it was made from; unknown ids are skipped. Not indexed: a
// context reads its own task's by id.
UNWIND $rows AS row
MATCH (t:Task {id: row.id})
SET t.query_vector = row.vector, t.query_hash = row.hash
