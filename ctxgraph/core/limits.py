"""How long the texts users give may be, in characters: checked when a
document or an argument is read, before any work (spaCy refuses texts over
1,000,000 characters, and a context or a listing must fit a response cap).
The MCP server's argument schemas, the handoff and task documents and the
knowledge added by hand (``core.models.knowledge.KnowledgeInput``) use the
same figures; what is read back from a store is not checked again."""

from __future__ import annotations

#: A task id, a dependency, a knowledge or file id, a document's source name.
MAX_ID_CHARS = 200
#: A task's name, its type, a tag, a section's name, a line range; a timestamp.
MAX_NAME_CHARS = 500
#: A task's objective, a handoff's summary, a pattern, gotcha, decision or
#: question with its rationale or context, a search text, a blocker's reason.
MAX_TEXT_CHARS = 20_000
#: One acceptance criterion.
MAX_CRITERION_CHARS = 2_000
#: Items of a list argument or field (dependencies, tags, kinds).
MAX_ITEMS = 100
#: Acceptance criteria of a task (with the limits above, a task's text is at
#: most ~120,000 characters, far below spaCy's 1,000,000).
MAX_CRITERIA = 50
#: A knowledge text (a pattern, issue, decision or question; the summary of
#: knowledge added by hand): it goes through spaCy and is shown whole.
MAX_KNOWLEDGE_CHARS = 10_000
#: A tag, and a run of non-blank characters in a text whose words become tags:
#: Neo4j cannot index a Tag name beyond ~8 KB.
MAX_WORD_CHARS = 1_000
#: A repository path, in UTF-8 bytes (PATH_MAX; Neo4j indexes File.path).
MAX_PATH_BYTES = 4_096

__all__ = [
    "MAX_CRITERIA", "MAX_CRITERION_CHARS", "MAX_ID_CHARS", "MAX_ITEMS", "MAX_KNOWLEDGE_CHARS", "MAX_NAME_CHARS",
    "MAX_PATH_BYTES", "MAX_TEXT_CHARS", "MAX_WORD_CHARS",
]
