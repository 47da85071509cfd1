// Links from handoffs to the knowledge they discovered ($rows: [{handoff_id, id}]).
UNWIND $rows AS row
MATCH (h:Handoff {id: row.handoff_id})
MATCH (k:Knowledge {id: row.id})
MERGE (h)-[:DISCOVERED]->(k)
