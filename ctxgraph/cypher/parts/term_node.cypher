// Part of files_fill and files_upsert: the Term `name` made when new (its
// file_df is counted by term_stats; no relationship links a file to it).
MERGE (term:Term {name: name})
  ON CREATE SET term.id = name
