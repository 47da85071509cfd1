// Every task whose id starts with $prefix (an imported history's tasks): its
// status, the content hash of its handoff `handoff:<id>` (null: none) and
// whether it has signals.
MATCH (t:Task)
WHERE t.id STARTS WITH $prefix
OPTIONAL MATCH (h:Handoff {id: 'handoff:' + t.id})
RETURN t.id AS id, t.status AS status, h.content_hash AS content_hash,
       t.signal_keywords IS NOT NULL AS tagged
