// The SUPERSEDES links from the knowledge an import is about to write ($ids),
// removed before it is written: the import states them again (import_put,
// knowledge_supersede), so a link its files no longer say is gone.
UNWIND $ids AS id
MATCH (:Knowledge {id: id})-[r:SUPERSEDES]->()
DELETE r
