"""How long the texts users give may be, in characters: checked when a
document or an argument is read, before any work (spaCy refuses texts over
1,000,000 characters, and a context or a listing must fit a response cap).
The MCP server's argument schemas and the handoff and task documents use the
same figures."""

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

__all__ = ["MAX_CRITERIA", "MAX_CRITERION_CHARS", "MAX_ID_CHARS", "MAX_ITEMS", "MAX_NAME_CHARS", "MAX_TEXT_CHARS"]
