// The whole context map: every file's entry, own terms and in_map (not the
// file_text document, `doc`, maybe long).
MATCH (f:File)
RETURN f {.path, .component, .notes, .terms, .in_map} AS props
ORDER BY f.path
