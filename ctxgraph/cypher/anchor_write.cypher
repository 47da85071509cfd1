// Create or replace code anchors by id ($rows: the anchors' properties;
// ctxgraph.core.models.anchors). Anchors have no relationships: one names its
// owner (a task id or a knowledge id) by `owner`, its task by `task_id`.
UNWIND $rows AS row
MERGE (a:Anchor {id: row.id})
SET a = row
