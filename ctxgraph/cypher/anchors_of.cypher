// The code anchors of $owners (task or knowledge ids), or on $paths (as named,
// or where the file is now): those of the items a context is about to show.
UNWIND $owners AS owner
MATCH (a:Anchor {owner: owner})
RETURN properties(a) AS a
UNION
UNWIND $paths AS path
MATCH (a:Anchor {path: path})
RETURN properties(a) AS a
UNION
UNWIND $paths AS path
MATCH (a:Anchor {current_path: path})
RETURN properties(a) AS a
