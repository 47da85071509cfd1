// Record delivered contexts ($rows: [{id, task_id, at, record}]); a delivery
// already there (the same id) is written again unscored.
UNWIND $rows AS row
MERGE (d:Delivery {id: row.id})
SET d = row
