"""The project's git history as finished tasks (issue 44; docs/history.md):
``import_history`` reads the commits of a branch (``ctxgraph.sources``) and
writes the kept ones through the stores' bulk path, then gives them their
signals; ``explain_commit`` says what became of one commit.

A run, in three steps:

1. **Reachability.** Unless the branch only moved forward from where the last
   complete import stopped (the store's ``HistorySource`` record), every
   commit reachable from the branch is listed (``git rev-list``): imported
   tasks whose commit is no longer among them (amended, rebased, reset away)
   are retired — kept, never shown — and retired ones whose commit is back
   are finished again.
2. **Full text.** The commits are read newest first (only those after the
   last tip when the branch moved forward) and written in batches, one
   transaction each: new tasks by ``import_history`` (a task already stored,
   by an earlier run or one beside this one, is left as it is), a stored one
   whose handoff changed (a later rename moved its files) by
   ``apply_handoffs``, a commit naming an existing task in a ``Task:``
   trailer as a second handoff of that task.
3. **Signals.** The imported tasks without signals get them (spaCy, in
   batches; ``write_task_signals``): their tags, as ``add_tasks`` gives them.

``time_limit`` is checked between batches: a run that stops leaves every
batch it wrote whole, and the next run goes on (the tasks stored are not
written again). The record of the tip is written only by a run that read
everything and finished both steps.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxgraph.core.models import FileEntry, Task, TaskStatus, utcnow
from ctxgraph.graph.records import FileLink, HandoffRecord, canonical_json, stable_id
from ctxgraph.service.freshness import NoRootError
from ctxgraph.service.history_run import (
    COMPLETED,
    Run,
    Writer,
    file_entry,
    file_link,
    no_collection,
    settings_paths,
    stored_paths,
)
from ctxgraph.service.history_types import (
    HISTORY_BATCH,
    CommitExplanation,
    HistoryOptions,
    HistoryReport,
    check_options,
    folders,
    verdict_of,
)
from ctxgraph.service.ingest import IngestMixin
from ctxgraph.service.reverts import RevertsMixin
from ctxgraph.sources.git_log import (
    GitError,
    is_ancestor,
    reachable,
    read_commit,
    read_log,
    resolve,
    run_git,
    work_tree,
)
from ctxgraph.sources.history import (
    ID_PREFIX,
    HistoryEntry,
    Renames,
    entries,
    is_commit_task,
    joined_task,
    task_id,
)
from ctxgraph.sources.history_rules import in_paths, judge, under

#: Tasks given their signals per extraction and write.
SIGNALS_BATCH = 1_000
#: The id of the store's record of the imported history.
SOURCE_ID = "git"


class HistoryMixin(RevertsMixin, IngestMixin):
    """The git history import."""

    def import_history(self, root: str | Path | None = None, options: HistoryOptions | None = None, *,
                       progress: Callable[[HistoryReport], None] | None = None) -> HistoryReport:
        """Import the history of ``root``'s repository (default: the project's
        root) as finished tasks (see the module's text); ``progress`` is called
        with the report so far after each batch."""
        options = options or HistoryOptions()
        check_options(options)
        repo = self._history_repo(root)
        state = self.store.history_source(SOURCE_ID) or {}
        paths = folders(options.paths if options.paths is not None else settings_paths(repo, state))
        options = replace(options, paths=paths)
        run = Run(repo=repo, options=options, report=HistoryReport(root=str(repo), branch=options.branch,
                                                                    paths=list(paths)),
                   progress=progress, started=time.monotonic())
        if options.branch == "HEAD" and not run_git(repo, "rev-list", "-n", "1", "--all").stdout.strip():
            run.report.mode = "no commits"  # a repository just made: nothing to import yet
            if not state:  # but its history is wanted: sync imports it
                self.store.write_history_source({"id": SOURCE_ID, "branch": options.branch, "tip": "",
                                                 "since": options.since or "", "paths": "\n".join(paths),
                                                 "at": utcnow()})
            return run.report
        head = resolve(repo, options.branch)
        run.report.head = head
        same = (bool(state) and state.get("branch") == options.branch
                and (state.get("since") or None) == options.since and stored_paths(state) == paths)
        if same and state.get("tip") == head:
            run.report.mode = "up to date"
        elif same and is_ancestor(repo, str(state.get("tip")), head):
            run.report.mode = "new commits"
            if self._walk(run, [head, "^" + str(state["tip"])]):  # a rename moved older files: map them again
                run.report = replace(run.report, mode="full", read=0, unchanged=0, skipped={}, files_dropped={},
                                     reverts=[])
                run.reverts.clear()
                self._reachability(run, head)
                self._walk(run, [head])
        else:
            self._reachability(run, head)
            self._walk(run, [head])
        run.report.full_text_seconds = round(time.monotonic() - run.started, 3)
        if run.report.mode != "up to date" and not run.report.partial:  # (their tags need spaCy: after the full text)
            run.report.gotchas, run.report.gotchas_removed = self._write_reverts(
                repo, run.reverts, whole=run.stored is not None)
        if options.signals and not run.report.partial:
            self._sign(run)
        if not run.report.partial and (options.signals or run.report.mode == "up to date"):
            self.store.write_history_source({"id": SOURCE_ID, "branch": options.branch, "tip": head,
                                             "since": options.since or "", "paths": "\n".join(paths),
                                             "at": utcnow()})
        run.tick()
        return run.report

    def explain_commit(self, commit: str, root: str | Path | None = None, *, branch: str = "HEAD",
                       ) -> CommitExplanation:
        """Whether ``commit`` was imported (as which task, in which state) or
        why it is not: a merge, a rule, another branch, not imported yet."""
        repo = self._history_repo(root)
        found = read_commit(repo, commit)
        head = resolve(repo, branch)
        verdict = judge(found)
        paths = folders(settings_paths(repo, self.store.history_source(SOURCE_ID) or {}))
        if paths and not verdict.skipped:
            verdict, _ = in_paths(verdict, tuple((c.status, c.path) for c in verdict.kept), paths)
        merge = len(found.parents) > 1
        joins = joined_task(found.message)
        if joins is not None and (is_commit_task(joins) or not self.store.get_tasks([joins])):
            joins = None
        tid = task_id(found.id)
        task = self.store.get_task(joins or tid)
        out = CommitExplanation(
            commit=found.id, task_id=joins or tid, subject=found.subject, date=found.date, branch=branch,
            on_branch=is_ancestor(repo, found.id, head), merge=merge, rule="merge" if merge else verdict.rule,
            files=[{"status": c.status, "path": c.path, **({"from": c.old_path} if c.old_path else {})}
                   for c in verdict.kept],
            dropped=[{"path": p, "rule": r} for p, r in verdict.dropped], reverts=verdict.reverts, joins=joins,
            stored="" if task is None else task.status.value, verdict="")
        out.verdict = verdict_of(out)
        return out

    def _history_repo(self, root: str | Path | None) -> Path:
        if root is None:
            root = self.root.path if self.root is not None else work_tree(Path.cwd())
            if root is None:
                raise NoRootError("no project root is known to read the git history of: pass --root, "
                                  "or run it in a git work tree")
        path = Path(root).resolve()
        if not path.is_dir():
            raise GitError(f"{path}: no such folder")
        if run_git(path, "rev-parse", "--git-dir", check=False).returncode != 0:
            raise GitError(f"{path}: not a git repository")
        return path

    def _reachability(self, run: Run, head: str) -> None:
        """Retire the imported tasks whose commit ``head`` no longer reaches;
        finish again the retired ones it reaches."""
        run.stored = self.store.history_tasks(ID_PREFIX)
        reached = {task_id(c) for c in reachable(run.repo, head)}
        ours = {i: s for i, s in run.stored.items() if s[1] is not None and is_commit_task(i)}
        retire = sorted(i for i, s in ours.items() if s[0] == TaskStatus.COMPLETED.value and i not in reached)
        revive = sorted(i for i, s in ours.items() if s[0] == TaskStatus.RETIRED.value and i in reached)
        now = utcnow()
        for ids, status in ((retire, TaskStatus.RETIRED), (revive, TaskStatus.COMPLETED)):
            for start in range(0, len(ids), SIGNALS_BATCH):
                self.store.set_statuses(ids[start:start + SIGNALS_BATCH], status, now)
            for i in ids:
                _, digest, signed = run.stored[i]
                run.stored[i] = (status.value, digest, signed)
        run.report.retired += len(retire)
        run.report.revived += len(revive)
        run.revived.update(revive)
        run.unsigned += sorted(i for i, s in ours.items() if not s[2])

    def _walk(self, run: Run, revisions: Sequence[str]) -> bool:
        """Read and write the commits of ``revisions``; whether a rename among
        them moved files older commits name (only asked of a run reading the
        new commits alone). Two batches are written at once, each in a
        thread of its own, while the next one is read (at most three batches
        in memory: ``Writer``)."""
        options = run.options
        renames = Renames()
        found = entries(read_log(run.repo, revisions, since=options.since, max_count=options.max_commits), renames,
                        paths=options.paths or ())
        batch: list[HistoryEntry] = []
        read = 0
        with no_collection(), contextlib.closing(found), \
                Writer(lambda b: self._write_batch(run, b), run.tick) as writer:
            for entry in found:
                read += 1
                self._count(run.report, entry)
                if not entry.verdict.skipped:
                    batch.append(entry)
                elif run.stored is not None and run.stored.get(entry.task_id, ("",))[0] == COMPLETED:
                    run.now_skipped.append(entry.task_id)  # imported under other rules or folders
                if entry.verdict.rule == "revert" and (not options.paths or any(
                        under(path, options.paths) for _, path in entry.files)):
                    run.reverts.append((entry.commit, entry.files, entry.verdict.reverts))
                if len(batch) >= options.batch_size:
                    writer.submit(batch)
                    batch = []
                    if run.out_of_time():
                        run.report.stopped = "time limit"
                        return False
            if batch:
                writer.submit(batch)
        self._retire_skipped(run)
        if options.max_commits is not None and read >= options.max_commits:
            run.report.stopped = "max commits"
        run.tick()
        return run.stored is None and renames.moved

    def _retire_skipped(self, run: Run) -> None:
        """Retire the imported tasks whose commit the rules now skip (the
        import's folders changed, or its rules did)."""
        ids = sorted(set(run.now_skipped))
        for start in range(0, len(ids), SIGNALS_BATCH):
            self.store.set_statuses(ids[start:start + SIGNALS_BATCH], TaskStatus.RETIRED, utcnow())
        back = len(run.revived & set(ids))  # revived as reachable a moment ago: retired as they were
        run.report.revived -= back
        run.report.retired += len(ids) - back
        run.now_skipped.clear()

    @staticmethod
    def _count(report: HistoryReport, entry: HistoryEntry) -> None:
        report.read += 1
        for _, dropped in entry.verdict.dropped:
            report.files_dropped[dropped] = report.files_dropped.get(dropped, 0) + 1
        rule = entry.verdict.rule
        if rule is not None:
            report.skipped[rule] = report.skipped.get(rule, 0) + 1
            if rule == "revert":
                report.reverts.append({"commit": entry.commit.id, "reverts": entry.verdict.reverts,
                                       "subject": entry.commit.subject})

    def _write_batch(self, run: Run, batch: Sequence[HistoryEntry]) -> None:
        """One batch of kept commits: new tasks in one bulk write, changed
        handoffs and joined tasks through ``apply_handoffs``."""
        wanted = sorted({e.join for e in batch if e.join and not is_commit_task(e.join)})
        joinable = {t.id for t in self.store.get_tasks(wanted)} if wanted else set()
        new: list[tuple[Task, HandoffRecord]] = []
        changed: list[HandoffRecord] = []
        joins: list[HandoffRecord] = []
        conflicts = unchanged = 0
        for entry in batch:
            assert entry.task is not None and entry.handoff is not None
            if entry.join in joinable:
                joins.append(self._commit_record({**entry.handoff, "task_id": entry.join},
                                                 f"handoff:{entry.join}:{entry.task_id}"))
                continue
            record = self._commit_record(entry.handoff, f"handoff:{entry.task_id}")
            stored = None if run.stored is None else run.stored.get(entry.task_id)
            if stored is None:
                new.append((entry.task, record))
            elif stored[1] is None:
                conflicts += 1
            elif stored[1] == record.content_hash:
                unchanged += 1
            else:
                changed.append(record)
        run.add(conflicts=conflicts, unchanged=unchanged)
        if new:
            written = self.store.import_history([t for t, _ in new], [r for _, r in new])
            run.add(imported=sum(written), unchanged=len(written) - sum(written))
            if run.stored is None:  # reading the new commits alone: a stored one may be retired (reset away and back)
                run.add(revived=self._revive([t for (t, _), w in zip(new, written, strict=True) if not w]))
            # (reading the new commits alone, a task stored before may lack its signals: _sign checks)
            with run.lock:
                run.unsigned += [t.id for (t, _), w in zip(new, written, strict=True) if w or run.stored is None]
                if run.stored is not None:
                    run.stored.update({t.id: (TaskStatus.COMPLETED.value, r.content_hash, False) for t, r in new})
        if changed:
            run.add(updated=sum(self.store.apply_handoffs(changed)))
        if joins:
            joined = self.store.apply_handoffs(joins)
            run.add(joined=sum(joined), unchanged=len(joined) - sum(joined))

    def _revive(self, tasks: Sequence[Task]) -> int:
        """Finish again the retired tasks among ``tasks`` (stored before); how many."""
        retired = [t.id for t in self.store.get_tasks([t.id for t in tasks]) if t.status is TaskStatus.RETIRED]
        if retired:
            self.store.set_statuses(retired, TaskStatus.COMPLETED, utcnow())
        return len(retired)

    @staticmethod
    def _commit_record(handoff: dict[str, Any], record_id: str) -> HandoffRecord:
        """The record a commit's handoff document writes: the one ``ingest_handoff``
        makes of it (tests/unit/test_history_rules.py compares them), built
        without validating again what :mod:`ctxgraph.sources.history` made."""
        files: dict[str, FileEntry] = {}
        links: list[FileLink] = []
        for rel, key in (("CREATED", "files_created"), ("MODIFIED", "files_modified")):
            for change in handoff[key]:
                path = change["path"]
                files.setdefault(path, file_entry(path))
                links.append(file_link(rel, path))
        raw = canonical_json(handoff)
        return HandoffRecord.model_construct(
            id=record_id, task_id=handoff["task_id"], summary=handoff["summary"], success=handoff["success"],
            completed_at=handoff["completed_at"], raw=raw, content_hash=stable_id("sha1", raw).split(":", 1)[1],
            knowledge=(), files=tuple(files.values()), links=tuple(links), supersedes=())

    def _sign(self, run: Run) -> None:
        """Step 3: the signals of the imported tasks without them."""
        started = time.monotonic()
        ids = list(dict.fromkeys(run.unsigned))
        for start in range(0, len(ids), SIGNALS_BATCH):
            if run.out_of_time():
                run.report.stopped = "time limit"
                break
            tasks = [t for t in self.store.get_tasks(ids[start:start + SIGNALS_BATCH]) if t.signals is None]
            found = self.extractor.extract_many([t.text for t in tasks], [t.type for t in tasks])
            self.store.write_task_signals([(t.id, s) for t, s in zip(tasks, found, strict=True)])
            run.report.signals += len(tasks)
            run.tick()
        run.report.signals_seconds = round(time.monotonic() - started, 3)


__all__ = ["HISTORY_BATCH", "SIGNALS_BATCH", "SOURCE_ID", "CommitExplanation", "HistoryMixin", "HistoryOptions",
           "HistoryReport"]
