"""Context outcomes, the service's half: recording deliveries, scoring them, reporting.

* :class:`DeliveryWriter` writes delivered contexts' records off the caller's
  thread: :func:`submit` builds the record (``scoring.delivery``, a
  quarter of a millisecond, on the caller's thread: built in bursts by the
  writer they held the GIL for milliseconds while a context was computed) and
  puts it on a bounded queue (:data:`QUEUE_SIZE`; when it is full the delivery
  is dropped, with a warning the first time); one daemon thread writes them, up to
  :data:`WRITE_BATCH` per transaction, once :data:`WRITE_DELAY` seconds passed
  since the first of them (or right away when flushed). ``flush`` waits until everything
  submitted is written; ``close`` flushes and stops the thread.
* :func:`score_handoffs` scores the deliveries of the tasks whose handoffs
  were just ingested (see ``scoring.score_delivery``); a delivery already
  scored by the same handoff content is left as it is.
* :func:`report` reads a window of deliveries and sums them up.

Nothing here may break or change a context or an ingestion, and no failure
goes unseen: a delivery that cannot be recorded (the store down, read-only or
closed, the queue full) is a warning with its cause, on the ``ctxgraph.outcomes``
logger (the CLI prints its warnings on stderr); a corrupt record is skipped,
and ``ctxgraph outcomes`` counts it.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ctxgraph.core.models import task_tags
from ctxgraph.outcomes import scoring
from ctxgraph.outcomes.records import (
    KNOWLEDGE_SECTIONS,
    TASK_SECTIONS,
    Delivery,
    DeliveryScore,
    parse_delivery,
    parse_score,
)

if TYPE_CHECKING:  # the store port is above this package: only its types are used
    from ctxgraph.compute.output import ComputedContext
    from ctxgraph.graph.records import HandoffRecord
    from ctxgraph.graph.store import KnowledgeStore
    from ctxgraph.outcomes.scoring import OutcomeReport

#: The outcomes' logger: warnings here say what was not recorded or scored, and why.
log = logging.getLogger("ctxgraph.outcomes")

#: Contexts waiting to be recorded at most (more are dropped, with a warning).
QUEUE_SIZE = 1000
#: Deliveries written per transaction at most.
WRITE_BATCH = 200
#: Seconds the writer waits for more deliveries before it writes (one
#: transaction per burst, not per context: on Neo4j each write costs the server
#: milliseconds of the CPU the next contexts need). ``flush`` does not wait.
WRITE_DELAY = 0.5
#: Seconds ``close`` waits for the queue to be written.
CLOSE_TIMEOUT = 30.0


def now_iso() -> str:
    """The current UTC time with microseconds (text order is time order)."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_delivery_id() -> str:
    return f"delivery:{uuid.uuid4().hex[:20]}"


class DeliveryWriter:
    """Writes delivered contexts to ``store`` from a background thread (see the module)."""

    def __init__(self, store: KnowledgeStore, keep: int) -> None:
        self.store = store
        self.keep = keep
        #: deliveries dropped because the queue was full or they could not be written
        self.dropped = 0
        self._pending: deque[Delivery] = deque()
        self._unfinished = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._queue_full = False
        self._flushing = 0

    def submit(self, record: Delivery) -> None:
        """Queue one delivery's record."""
        with self._cond:
            if self._closed or self._unfinished >= QUEUE_SIZE:
                if self._closed or not self._queue_full:  # a full queue: once, not once per context
                    log.warning("delivery of %s not recorded: %s", record.task_id, "the writer is closed"
                                if self._closed else f"{QUEUE_SIZE} deliveries are waiting to be written; "
                                "more are dropped until they are")
                self._queue_full = not self._closed
                self.dropped += 1
                return
            self._queue_full = False
            self._pending.append(record)
            self._unfinished += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ctxgraph-deliveries", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if not self._pending:
                    return
                deadline = time.monotonic() + WRITE_DELAY
                while len(self._pending) < WRITE_BATCH and not self._closed and not self._flushing:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._cond.wait(remaining)
                batch = [self._pending.popleft() for _ in range(min(WRITE_BATCH, len(self._pending)))]
            try:
                self.store.record_deliveries(batch, self.keep)
            except Exception as exc:  # the store down, read-only or closed: the contexts are unaffected
                self.dropped += len(batch)
                log.warning("%d %s not recorded: %s", len(batch), "delivery" if len(batch) == 1 else "deliveries",
                            _cause(exc))
            with self._cond:
                self._unfinished -= len(batch)
                self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything submitted is written (or failed); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()
            try:
                while self._unfinished:
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        return False
                    self._cond.wait(remaining)
            finally:
                self._flushing -= 1
        return True

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Write what is queued (waiting ``timeout`` seconds at most), then stop."""
        if not self.flush(timeout):
            log.warning("deliveries still queued after %.0f s are not recorded", timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)


def _cause(exc: BaseException) -> str:
    """``exc`` as a warning's cause: its message, else its type."""
    return str(exc).strip() or type(exc).__name__


def submit(writer: DeliveryWriter, ctx: ComputedContext) -> None:
    """Queue ``ctx`` as delivered now (its record built here)."""
    writer.submit(scoring.delivery(ctx, delivery_id=new_delivery_id(), at=now_iso()))


def score_handoffs(store: KnowledgeStore, records: Sequence[HandoffRecord]) -> int:
    """Score the stored deliveries of the tasks of ``records`` (the handoffs just
    written; the last one per task counts) that this handoff content has not
    scored yet. Returns how many were scored."""
    handoffs = {r.task_id: r for r in records}
    todo: list[tuple[Delivery, HandoffRecord]] = []
    for found in store.deliveries(task_ids=sorted(handoffs)):
        record = handoffs[found.task_id]
        old = parse_score(found)
        if old is not None and old.handoff == record.content_hash:
            continue
        delivery = parse_delivery(found)
        if delivery is not None:
            todo.append((delivery, record))
    if not todo:
        return 0
    knowledge_ids = sorted({i.id for d, _ in todo for i in d.items if i.section in KNOWLEDGE_SECTIONS})
    task_ids = sorted({i.id for d, _ in todo for i in d.items if i.section in TASK_SECTIONS})
    knowledge = {k.id: ([k.location] if k.location else [], list(k.tags)) for k in store.get_knowledge(knowledge_ids)}
    files = store.handoff_files(task_ids)
    tasks = {t.id: (files.get(t.id, []), task_tags(t)) for t in store.get_tasks(task_ids)}
    scores: list[tuple[str, DeliveryScore]] = []
    for delivery, record in todo:
        changed = [link.path for link in record.links if link.rel in ("CREATED", "MODIFIED")]
        tags = [t for k in record.knowledge for t in k.tags]
        scores.append((delivery.id, scoring.score_delivery(delivery, handoff=record.content_hash, changed=changed,
                                                           handoff_tags=tags, knowledge=knowledge, tasks=tasks)))
    store.score_deliveries(scores)
    return len(scores)


def report(store: KnowledgeStore, *, since: str | None = None, last: int | None = None) -> OutcomeReport:
    """The outcomes of the newest ``last`` deliveries made at or after ``since``."""
    rows = store.deliveries(since=since, last=last)
    parsed = [(d, parse_score(row)) for row in rows if (d := parse_delivery(row)) is not None]
    return scoring.summarize(parsed, unreadable=len(rows) - len(parsed), since=since, last=last)
