"""The gotchas of reverts (issue 44; :mod:`ctxgraph.sources.reverts`): written
after each history import through the store's bulk write of an import
(``write_import``, source :data:`SOURCE`: one state per revert commit, its
id the commit's), so that a revert rewritten away takes its gotcha with it.

A run that read the whole branch knows every revert on it: a stored one it
did not read is gone (amended, rebased or reset away) and its gotcha is
deleted. A run that read the new commits alone adds theirs; none of the
stored ones can have left the branch then."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ctxgraph.core.models import ImportBatch, ImportedFile, normalize_timestamp, utcnow
from ctxgraph.service.base import ServiceBase
from ctxgraph.sources.git_log import Commit, run_git
from ctxgraph.sources.history import clean_message, redact_message
from ctxgraph.sources.reverts import digest, revert_item, revert_text, reverted_commit, reverted_subject, why

#: The import's name in the store's state (``imported_files``).
SOURCE = "reverts"


class RevertsMixin(ServiceBase):
    """Reverts as gotchas."""

    def _write_reverts(self, repo: Path, reverts: Sequence[tuple[Commit, tuple[tuple[str, str], ...], str]], *,
                       whole: bool) -> tuple[int, int]:
        """Write the gotchas of ``reverts`` (each commit, its files as
        (status, path at the tip), and the commit it reverts, "" when it
        does not say); with ``whole`` (the run read the whole branch), delete
        those of the stored reverts not among them. Returns (written, removed)."""
        stored = {f.path: f for f in self.store.imported_files(SOURCE)}
        found = {commit.id: (commit, files, reverted) for commit, files, reverted in reverts}
        gone = sorted(p for p in stored if p not in found) if whole else []
        items, states = [], []
        for cid, (commit, files, named) in found.items():
            reverted, known = self._lookup(repo, named or reverted_commit(commit.subject))
            message = redact_message(clean_message(commit.message))
            said = reverted_subject(commit.subject) or known or commit.subject
            subject = redact_message(clean_message(said))
            text = revert_text(subject, reverted, cid, message)
            signals = self.extractor.extract(f"{subject}. {why(message)}")
            at = normalize_timestamp(commit.date) or utcnow()
            item = revert_item(cid, text, files, signals, self.extractor.normalize_tag, at)
            state = digest(item)
            if cid in stored and stored[cid].sha256 == state:
                continue
            items.append(item)
            states.append(ImportedFile(path=cid, kind="revert", mtime_ns=0, size=0, sha256=state, items=(item.id,)))
        if not (items or gone):
            return 0, 0
        removed = tuple(i for p in gone for i in stored[p].items)
        self.store.write_import(SOURCE, ImportBatch(items=tuple(items), removed=removed, files=tuple(states),
                                                    gone=tuple(gone)))
        return len(items), len(removed)

    @staticmethod
    def _lookup(repo: Path, commit: str) -> tuple[str, str]:
        """``commit``'s full id and subject (as given and "" when there is no such commit here)."""
        if not commit:
            return "", ""
        done = run_git(repo, "log", "-1", "--format=%H%x00%s", commit, "--", check=False)
        full, _, subject = done.stdout.strip().partition("\0")
        return (full, subject) if done.returncode == 0 and full else (commit, "")


__all__ = ["SOURCE", "RevertsMixin"]
