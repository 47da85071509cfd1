// The size of the finished-task corpus: how many, and their total length in terms.
MATCH (t:Task {status: 'completed'})
RETURN count(t) AS n, sum(coalesce(t.term_count, 0)) AS total
