// Drop the outgoing links of the handoffs ($ids) about to be replaced by a new version.
// (The hint keeps the seek per id whatever the statistics say: on a nearly empty graph
// the planner once chose to scan the whole index and filter it.)
UNWIND $ids AS id
MATCH (h:Handoff {id: id})-[r]->()
USING INDEX SEEK h:Handoff(id)
DELETE r
