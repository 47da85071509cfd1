// Add finished tasks new to the graph to the history of the files they
// touched ($rows: [{path, touches, task_len, terms}], paths sorted: per file
// how many of the new tasks created or modified it, their length in terms and
// their terms): what files_refresh would count again from every touching
// task, added instead of recounted (the bulk import's write: the new tasks'
// links are new, so nothing they add was counted before). A file's `doc`
// (only a rankable file has one) takes the new terms, and the statistics
// BM25 scores file_text with follow (term_stats). Each file is locked first.
UNWIND $rows AS row
MATCH (f:File {path: row.path})
SET f.path = f.path
WITH f, row, f.doc AS old
SET f.touches = coalesce(f.touches, 0) + row.touches,
    f.task_len = coalesce(f.task_len, 0) + row.task_len
WITH f, row, old, CASE WHEN coalesce(f.in_map, true) THEN coalesce(old, coalesce(f.terms, [])) + row.terms END AS new
SET f.doc = new
// include: term_stats df=file_df corpus=file_text
