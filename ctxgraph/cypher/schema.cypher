// Constraints and indexes of the ctxgraph graph. Every statement is idempotent
// (IF NOT EXISTS); statements are separated by semicolons.
// task_text and file_text rank the history (history.cypher) with Lucene's BM25
// over the `doc` property (a list of terms, each list item indexed as a value
// of the one field): a finished task's terms; a rankable file's own terms plus
// the terms of every finished task that touched it (files_refresh). Lucene only
// finds the candidates: their scores come from statistics the graph keeps
// exact (Term task_df/file_df, the Corpus nodes; tasks_doc, files_refresh).
CREATE CONSTRAINT task_id IF NOT EXISTS FOR (n:Task) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT handoff_id IF NOT EXISTS FOR (n:Handoff) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT knowledge_id IF NOT EXISTS FOR (n:Knowledge) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT file_path IF NOT EXISTS FOR (n:File) REQUIRE n.path IS UNIQUE;
CREATE CONSTRAINT tag_name IF NOT EXISTS FOR (n:Tag) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT term_name IF NOT EXISTS FOR (n:Term) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT corpus_id IF NOT EXISTS FOR (n:Corpus) REQUIRE n.id IS UNIQUE;
CREATE INDEX task_status IF NOT EXISTS FOR (n:Task) ON (n.status);
CREATE INDEX task_completed_at IF NOT EXISTS FOR (n:Task) ON (n.completed_at);
CREATE INDEX file_touches IF NOT EXISTS FOR (n:File) ON (n.touches);
CREATE INDEX knowledge_updated_at IF NOT EXISTS FOR (n:Knowledge) ON (n.updated_at);
CREATE CONSTRAINT delivery_id IF NOT EXISTS FOR (n:Delivery) REQUIRE n.id IS UNIQUE;
CREATE INDEX delivery_task IF NOT EXISTS FOR (n:Delivery) ON (n.task_id);
CREATE INDEX delivery_at IF NOT EXISTS FOR (n:Delivery) ON (n.at);
CREATE CONSTRAINT anchor_id IF NOT EXISTS FOR (n:Anchor) REQUIRE n.id IS UNIQUE;
CREATE INDEX anchor_owner IF NOT EXISTS FOR (n:Anchor) ON (n.owner);
CREATE INDEX anchor_path IF NOT EXISTS FOR (n:Anchor) ON (n.path);
CREATE INDEX anchor_current_path IF NOT EXISTS FOR (n:Anchor) ON (n.current_path);
CREATE CONSTRAINT imported_file_id IF NOT EXISTS FOR (n:ImportedFile) REQUIRE n.id IS UNIQUE;
CREATE INDEX imported_file_source IF NOT EXISTS FOR (n:ImportedFile) ON (n.source);
CREATE CONSTRAINT history_source_id IF NOT EXISTS FOR (n:HistorySource) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT project_id IF NOT EXISTS FOR (n:Project) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (n:Chunk) REQUIRE n.id IS UNIQUE;
CREATE INDEX chunk_project_path IF NOT EXISTS FOR (n:Chunk) ON (n.project, n.path);
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON (n.embedding) OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX task_embedding IF NOT EXISTS FOR (n:Task) ON (n.embedding) OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (n:Chunk) ON EACH [n.search_text] OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}};
CREATE FULLTEXT INDEX knowledge_text IF NOT EXISTS FOR (n:Knowledge) ON EACH [n.summary, n.rationale];
CREATE FULLTEXT INDEX task_text IF NOT EXISTS FOR (n:Task) ON EACH [n.doc] OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}};
CREATE FULLTEXT INDEX file_text IF NOT EXISTS FOR (n:File) ON EACH [n.doc] OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}};
