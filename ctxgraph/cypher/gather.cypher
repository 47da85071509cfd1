// Everything one context needs, in one round trip, given the query tags'
// rarity weights (their degrees from tag_stats):
// knowledge by keyword tags and by domain tags, the dependencies with their handoffs, context-map
// candidates and size, related completed tasks, working memory, and the code
// anchors of what the context may show (when $anchors).
// The three rankings by tag (knowledge by keyword tags, by domain tags, related
// tasks) sum the rarity weights of the tags each item matches, then order by
// score and break ties by a date and the id. The ties' properties are read
// only for the items scoring at least the limit-th best (`floor`; all when
// fewer): at a million nodes a tag reaches hundreds of items, and reading two
// properties of each (a walk along the node's property chain) was most of the
// statement's time (issue 18).
// The tasks are read as the properties the Task model takes
// (records.task_from_props; tests/unit/test_cypher_files.py holds the list):
// not their vectors, terms or documents (a finished task's 384-float
// embedding is most of its properties' bytes, read and sent for nothing).
CALL () {
  // Knowledge by keyword tags ($keyword_weighted: [[tag, rarity weight], ...]
  // of the keyword tags under the degree cap, from ctxgraph.core.rarity).
  UNWIND $keyword_weighted AS w
  // include: knowledge_by_weight
  WITH ranked, ranked[$keyword_limit - 1].score AS floor
  UNWIND ranked AS x
  WITH x WHERE floor IS NULL OR x.score >= floor
  WITH x.k AS k, x.matched AS matched, x.score AS score
  ORDER BY score DESC, coalesce(k.updated_at, '') DESC, k.id ASC
  LIMIT $keyword_limit
  RETURN collect({props: properties(k), matched: matched}) AS keyword_hits
}
CALL () {
  UNWIND $domain_weighted AS w
  // include: knowledge_by_weight
  WITH ranked, ranked[$domain_limit - 1].score AS floor
  UNWIND ranked AS x
  WITH x WHERE floor IS NULL OR x.score >= floor
  WITH x.k AS k, x.matched AS matched, x.score AS score
  ORDER BY score DESC, coalesce(k.updated_at, '') DESC, k.id ASC
  LIMIT $domain_limit
  RETURN collect({props: properties(k), matched: matched}) AS domain_hits
}
CALL () {
  UNWIND $dep_ids AS id
  MATCH (d:Task {id: id})
  OPTIONAL MATCH (d)-[:HANDED_OFF]->(h:Handoff)
  WITH d, h ORDER BY d.id
  RETURN collect({
    task: d {.id, .name, .objective, .acceptance_criteria, .type, .complexity, .status, .blocked_reason, .blocked_at,
      .requires_context, .outcome_summary, .success, .completed_at, .created_at, .updated_at, .signal_keywords,
      .signal_domains, .signal_files, .signal_types},
    deps: [(d)-[:DEPENDS_ON]->(x:Task) | x.id],
    summary: h.summary,
    to_read: CASE WHEN h IS NULL THEN [] ELSE [(h)-[r:READ_NEXT]->(f:File) | {file: f.path, reason: r.reason}] END,
    created: CASE WHEN h IS NULL THEN [] ELSE [(h)-[r:CREATED]->(f:File) | {file: f.path, reason: r.purpose}] END,
    knowledge: CASE WHEN h IS NULL THEN [] ELSE [(h)-[:DISCOVERED]->(k:Knowledge) | properties(k)] END
  }) AS dependencies
}
CALL () {
  // The seed's context-map candidates: only when the history has no files to
  // rank (an empty graph), as the history's ranking covers every file.
  WITH 1 AS go WHERE $context_map
  MATCH (f:File)
  WHERE any(k IN $keywords WHERE toLower(f.component) CONTAINS k OR toLower(f.path) CONTAINS k)
     OR any(d IN $domains WHERE toLower(f.notes) CONTAINS d)
     OR any(p IN $files WHERE f.path CONTAINS p)
  WITH f ORDER BY f.path
  // the entries only: not the file_text document (`doc`), maybe long
  RETURN collect(f {.path, .component, .notes}) AS files
}
CALL () {
  RETURN COUNT { (:File) } AS file_count
}
CALL () {
  // (the excluded tasks as nodes: no id read per tagged task; finished ones
  // by the Completed label, in the node's record, not by status)
  OPTIONAL MATCH (x:Task) WHERE x.id IN $exclude
  RETURN collect(x) AS excluded
}
CALL (excluded) {
  UNWIND $related_weighted AS w
  MATCH (tag:Tag {name: w[0]})<-[:TAGGED]-(t:Completed)
  WHERE NOT t IN excluded
  WITH t, collect(w[0]) AS matched, round(sum(w[1]), 9) AS score
  ORDER BY score DESC
  WITH collect({t: t, matched: matched, score: score}) AS ranked
  WITH ranked, ranked[$related_limit - 1].score AS floor
  UNWIND ranked AS x
  WITH x WHERE floor IS NULL OR x.score >= floor
  WITH x.t AS t, x.matched AS matched, x.score AS score
  ORDER BY score DESC, coalesce(t.completed_at, '') DESC, t.id ASC
  LIMIT $related_limit
  RETURN collect({props: t {.id, .name, .objective, .acceptance_criteria, .type, .complexity, .status, .blocked_reason, .blocked_at,
    .requires_context, .outcome_summary, .success, .completed_at, .created_at, .updated_at, .signal_keywords,
    .signal_domains, .signal_files, .signal_types},
                  matched: matched, deps: [(t)-[:DEPENDS_ON]->(d:Task) | d.id]}) AS related
}
CALL () {
  // The working memory's newest finished tasks: read in completed_at order from
  // its index and stopped after $recent_limit (not every finished task sorted);
  // finished tasks without a completion time come last, read only if too few.
  CALL () {
    WITH 1 AS go WHERE $working_memory
    MATCH (t:Task)
    USING INDEX t:Task(completed_at)
    WHERE t.completed_at > '' AND t.status IN ['completed', 'failed']
    WITH t ORDER BY t.completed_at DESC, t.id DESC
    LIMIT $recent_limit
    RETURN collect(t {.id, .name, .objective, .acceptance_criteria, .type, .complexity, .status, .blocked_reason, .blocked_at,
      .requires_context, .outcome_summary, .success, .completed_at, .created_at, .updated_at, .signal_keywords,
      .signal_domains, .signal_files, .signal_types}) AS dated
  }
  CALL (dated) {
    // (the statuses as a list that is empty when not needed: no index seek then)
    UNWIND CASE WHEN $working_memory AND size(dated) < $recent_limit THEN ['completed', 'failed'] ELSE [] END AS status
    MATCH (t:Task {status: status})
    WHERE coalesce(t.completed_at, '') = ''
    WITH t ORDER BY t.id DESC
    RETURN collect(t {.id, .name, .objective, .acceptance_criteria, .type, .complexity, .status, .blocked_reason, .blocked_at,
      .requires_context, .outcome_summary, .success, .completed_at, .created_at, .updated_at, .signal_keywords,
      .signal_domains, .signal_files, .signal_types}) AS undated
  }
  RETURN dated + undated[..($recent_limit - size(dated))] AS recent
}
CALL () {
  MATCH (t:Task {status: 'blocked'})
  WHERE $working_memory
  WITH t ORDER BY coalesce(t.blocked_at, ''), t.id
  RETURN collect({id: t.id, reason: coalesce(t.blocked_reason, ''), since: t.blocked_at}) AS blockers
}
CALL () {
  // Concurrent work (docs/decisions.md): the other tasks in progress, newest
  // first, each with the files its text names and the record of its latest
  // delivered context (the status as a list, empty when not asked: no seek then).
  UNWIND CASE WHEN $concurrent_of IS NULL THEN [] ELSE ['in_progress'] END AS status
  MATCH (t:Task {status: status})
  WHERE t.id <> $concurrent_of
  WITH t ORDER BY coalesce(t.updated_at, '') DESC, t.id
  LIMIT $concurrent_limit
  CALL (t) {
    OPTIONAL MATCH (d:Delivery {task_id: t.id})
    WITH d ORDER BY d.at DESC, d.id DESC
    LIMIT 1
    RETURN d.record AS record
  }
  RETURN collect({props: t {.id, .name, .objective, .signal_files}, record: record}) AS concurrent
}
CALL () {
  MATCH (p:Project)
  WITH p ORDER BY p.id
  RETURN collect(properties(p)) AS projects
}
CALL (keyword_hits, domain_hits, dependencies) {
  // The stored code anchors of the items the context may show, for its
  // just-in-time check (docs/freshness.md), here rather than in a read of
  // their own: their owners are the dependencies' tasks, the knowledge of
  // their handoffs with a location and the knowledge hits with one
  // (Candidates.anchor_owners in Python says the same). The owners as a list
  // that is empty when not asked: no seek then.
  WITH [d IN dependencies | d.task.id]
     + reduce(ids = [], d IN dependencies | ids + [k IN d.knowledge WHERE coalesce(k.location, '') <> '' | k.id])
     + [h IN keyword_hits + domain_hits WHERE coalesce(h.props.location, '') <> '' | h.props.id] AS owners
  UNWIND CASE WHEN $anchors THEN owners ELSE [] END AS owner
  WITH DISTINCT owner
  MATCH (a:Anchor {owner: owner})
  RETURN collect(properties(a)) AS anchors
}
RETURN keyword_hits, domain_hits, dependencies, files, file_count, related, recent, blockers, concurrent, projects,
       anchors
