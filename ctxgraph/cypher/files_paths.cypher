// Every file's path, in order (an import recounts every file's history).
MATCH (f:File)
RETURN f.path AS path
ORDER BY path
