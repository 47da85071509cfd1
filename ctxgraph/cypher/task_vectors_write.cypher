// Store the vectors of tasks' texts ($rows: [{id, hash, vector}]); unknown ids are skipped.
UNWIND $rows AS row
MATCH (t:Task {id: row.id})
CALL db.create.setNodeVectorProperty(t, 'embedding', row.vector)
SET t.embedding_hash = row.hash
