// Drop the outgoing links of a handoff about to be replaced by a new version.
MATCH (h:Handoff {id: $id})-[r]->()
DELETE r
