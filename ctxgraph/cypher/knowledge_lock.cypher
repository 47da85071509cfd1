// The knowledge nodes a handoff batch merges into ($ids, sorted), each locked
// before it is read (the SET takes the node's write lock: a concurrent writer
// waits, then reads what this one committed) and created bare when missing
// (MERGE on the id constraint: two writers never both create it). Their
// properties go through handoff_batch.merge_knowledge; knowledge_merge writes
// the result in the same transaction.
UNWIND $ids AS id
MERGE (k:Knowledge {id: id})
SET k.id = k.id
RETURN properties(k) AS props
