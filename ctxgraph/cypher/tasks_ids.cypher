// Every task's id, in order (an import, or a recount of the full-text
// statistics, sets every task's task_text document again: tasks_doc).
MATCH (t:Task)
RETURN t.id AS id
ORDER BY id
