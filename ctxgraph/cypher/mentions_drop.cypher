// Up to $batch of the MENTIONS relationships an older ctxgraph linked tasks
// and files to their Term nodes with, deleted (nothing reads them: a task's
// terms are its `terms`, a term's statistics its task_df and file_df); how
// many. Run when the schema is applied until none is left.
MATCH ()-[r:MENTIONS]->()
WITH r LIMIT $batch
DELETE r
RETURN count(*) AS deleted
