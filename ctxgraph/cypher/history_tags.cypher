// Link the tasks an import just created to their tags ($rows: [{id, tags}],
// only tasks with tags), the Tag nodes made when new.
UNWIND $rows AS row
MATCH (t:Task {id: row.id})
WITH t, row
// include: task_tags
