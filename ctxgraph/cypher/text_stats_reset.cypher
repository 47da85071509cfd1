// Forget up to $batch terms' document frequencies (and the Corpus nodes),
// before the statistics of the full-text indexes are counted from zero;
// returns how many terms were reset (0: done).
CALL () {
  MATCH (c:Corpus)
  DELETE c
}
MATCH (term:Term)
WHERE term.task_df IS NOT NULL OR term.file_df IS NOT NULL
WITH term LIMIT $batch
REMOVE term.task_df, term.file_df
RETURN count(term) AS reset
