"""A commit's message goes into contexts (a task's name and objective), hence
into prompts: the import redacts what looks like a credential in it, with the
memory index's rules (issue 40, for the git import of issue 44)."""

from __future__ import annotations

from ctxgraph.sources.history import redact_message


def test_a_key_in_a_commit_message_is_redacted_and_the_rest_kept() -> None:
    message = ('Rotate the billing key\n\nThe old one, api_key = "sk-live-4f9aQ2xR7tLmN8pV3bK6wZ0c", leaked.\n'
               "AWS: AKIAIOSFODNN7REALKEY\n")
    redacted = redact_message(message)
    assert "sk-live-4f9aQ2xR7tLmN8pV3bK6wZ0c" not in redacted and "AKIAIOSFODNN7REALKEY" not in redacted
    assert redacted.startswith("Rotate the billing key\n\nThe old one, api_key = ") and "[redacted]" in redacted
    assert redact_message("Fix the login route (#12)") == "Fix the login route (#12)"
