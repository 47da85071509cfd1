// The code anchors of $owners (task or knowledge ids), or on $paths (as named,
// or where the file is now): those of the items a context is about to show,
// in one record.
CALL {
  UNWIND $owners AS owner
  MATCH (a:Anchor {owner: owner})
  RETURN a
  UNION
  UNWIND $paths AS path
  MATCH (a:Anchor {path: path})
  RETURN a
  UNION
  UNWIND $paths AS path
  MATCH (a:Anchor {current_path: path})
  RETURN a
}
RETURN collect(properties(a)) AS anchors
