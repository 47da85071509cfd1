// Drop the outgoing links of the handoffs ($ids) about to be replaced by a new version.
UNWIND $ids AS id
MATCH (h:Handoff {id: id})-[r]->()
DELETE r
