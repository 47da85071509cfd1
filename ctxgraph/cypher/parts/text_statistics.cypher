// Part of history_text_tasks and history_text_files: what scoring a text
// candidate exactly needs besides its document, kept exact at write time
// (term_stats): the {{corpus}} Corpus node's documents with a term and their
// total length, and per query term ($terms) its {{df}}.
CALL () {
  OPTIONAL MATCH (c:Corpus {id: '{{corpus}}'})
  RETURN [coalesce(c.docs, 0), coalesce(c.length, 0)] AS corpus
}
CALL () {
  UNWIND $terms AS name
  OPTIONAL MATCH (term:Term {name: name})
  RETURN collect([name, coalesce(term.{{df}}, 0)]) AS df
}
