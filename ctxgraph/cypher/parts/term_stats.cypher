// Part of tasks_doc and files_refresh: from the documents' old and new terms
// ($changes collected here), each Term's {{df}} and the {{corpus}} Corpus node's
// documents and length, updated by the difference (terms in name order).
WITH collect({old: coalesce(old, []), new: coalesce(new, [])}) AS changes
CALL (changes) {
  UNWIND changes AS change
  CALL (change) {
    UNWIND change.old AS name
    WITH DISTINCT name
    RETURN name, -1 AS step
    UNION ALL
    UNWIND change.new AS name
    WITH DISTINCT name
    RETURN name, 1 AS step
  }
  WITH name, sum(step) AS delta
  WHERE delta <> 0
  WITH name, delta
  ORDER BY name
  MATCH (term:Term {name: name})
  SET term.{{df}} = coalesce(term.{{df}}, 0) + delta
}
CALL (changes) {
  WITH reduce(n = 0, c IN changes | n + CASE WHEN size(c.new) > 0 THEN 1 ELSE 0 END
                                        - CASE WHEN size(c.old) > 0 THEN 1 ELSE 0 END) AS docs,
       reduce(n = 0, c IN changes | n + size(c.new) - size(c.old)) AS length
  WHERE docs <> 0 OR length <> 0
  MERGE (c:Corpus {id: '{{corpus}}'})
  SET c.docs = coalesce(c.docs, 0) + docs, c.length = coalesce(c.length, 0) + length
}
