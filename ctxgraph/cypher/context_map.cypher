// Context-map entries that can score under the seed's rules: a keyword in the
// component or path, a domain in the notes, a mentioned file in the path
// (the entry only: not the file_text document, `doc`, maybe long).
MATCH (f:File)
WHERE any(k IN $keywords WHERE toLower(f.component) CONTAINS k OR toLower(f.path) CONTAINS k)
   OR any(d IN $domains WHERE toLower(f.notes) CONTAINS d)
   OR any(p IN $files WHERE f.path CONTAINS p)
RETURN f {.path, .component, .notes} AS props
ORDER BY f.path
