// Score deliveries ($rows: [{id, score, props}]): the score's JSON and its flat
// figures (hit5, hit10, changed, files, items, items_used, wasted_tokens) for
// Cypher. Deliveries gone since are skipped.
UNWIND $rows AS row
MATCH (d:Delivery {id: row.id})
SET d.score = row.score
SET d += row.props
