// Set the signals of tasks whose text is unchanged ($rows: [{id, keywords,
// domains, files, types, tags}]) and link them to their tags instead of the
// old ones: what upsert_tasks writes of a task's signals, nothing else (its
// terms, documents and counts stay as they are). Absent tasks are skipped.
UNWIND $rows AS row
MATCH (t:Task {id: row.id})
SET t.signal_keywords = row.keywords,
    t.signal_domains = row.domains,
    t.signal_files = row.files,
    t.signal_types = row.types
WITH t, row
// include: task_tags
