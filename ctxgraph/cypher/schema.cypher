// Constraints and indexes of the ctxgraph graph. Every statement is idempotent
// (IF NOT EXISTS); statements are separated by semicolons.
CREATE CONSTRAINT task_id IF NOT EXISTS FOR (n:Task) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT handoff_id IF NOT EXISTS FOR (n:Handoff) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT knowledge_id IF NOT EXISTS FOR (n:Knowledge) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT file_path IF NOT EXISTS FOR (n:File) REQUIRE n.path IS UNIQUE;
CREATE CONSTRAINT tag_name IF NOT EXISTS FOR (n:Tag) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT term_name IF NOT EXISTS FOR (n:Term) REQUIRE n.name IS UNIQUE;
CREATE INDEX task_status IF NOT EXISTS FOR (n:Task) ON (n.status);
CREATE INDEX task_completed_at IF NOT EXISTS FOR (n:Task) ON (n.completed_at);
CREATE INDEX knowledge_updated_at IF NOT EXISTS FOR (n:Knowledge) ON (n.updated_at);
