"""What the service learns from finished work: delivered contexts recorded
and scored (:mod:`ctxgraph.outcomes`), and the file ranking's weights fitted
on the finished history (:mod:`ctxgraph.compute.tune`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ctxgraph.errors import InvalidArgumentError
from ctxgraph.graph.store import UnavailableStore
from ctxgraph.service.base import ServiceBase

if TYPE_CHECKING:
    from ctxgraph.compute.config import ContextConfig
    from ctxgraph.compute.output import ComputedContext
    from ctxgraph.compute.tune import TuneResult
    from ctxgraph.graph.records import HandoffRecord
    from ctxgraph.outcomes.scoring import OutcomeReport

# ctxgraph.outcomes (the delivery log, with the whole compute pipeline) and
# ctxgraph.compute.tune (numpy) are imported where they are used: a command
# that computes no context, such as `ctxgraph task list`, loads neither.

#: The outcomes' logger (not the service's, whose warnings the CLI leaves to the
#: commands): a delivery not recorded or not scored is a warning with its cause.
log = logging.getLogger("ctxgraph.outcomes")


class FeedbackMixin(ServiceBase):
    """Context outcomes and tuning."""

    def record_delivery(self, ctx: ComputedContext) -> None:
        """Record ``ctx`` as delivered now (``compute`` does it): its record built
        here, queued and written by a background thread, only when ``record_outcomes`` is on and the store
        is open for writing. Never raises and never changes the context: a
        failure is a warning with its cause."""
        try:
            if not self.record_outcomes or isinstance(self.store, UnavailableStore) \
                    or getattr(self.store, "read_only", False) is True:
                return
            from ctxgraph.outcomes import delivery_log as outcome_log

            if self._deliveries is None:
                self._deliveries = outcome_log.DeliveryWriter(self.store, self.config.outcomes_keep)
            outcome_log.submit(self._deliveries, ctx)
        except Exception as exc:  # recording never fails a context; the warning says what was lost
            log.warning("delivery of %s not recorded: %s", ctx.task_id, str(exc).strip() or type(exc).__name__)

    def flush_outcomes(self, timeout: float | None = None) -> bool:
        """Wait until the recorded deliveries are written; False on timeout."""
        return self._deliveries is None or self._deliveries.flush(timeout)

    def outcomes(self, *, since: str | datetime | None = None, last: int | None = None) -> OutcomeReport:
        """Hit rates, items used and tokens wasted of the newest ``last`` deliveries
        made at or after ``since`` (a date or an ISO time; naive means UTC)."""
        if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 1):
            raise InvalidArgumentError(f"last: {last!r} is not a whole number of at least 1")
        from ctxgraph.outcomes import delivery_log as outcome_log

        self.flush_outcomes()
        return outcome_log.report(self.store, since=_since(since), last=last)

    def _score_outcomes(self, records: Sequence[HandoffRecord]) -> None:
        if not self.record_outcomes or not records:
            return
        from ctxgraph.outcomes import delivery_log as outcome_log

        try:
            self.flush_outcomes()
            outcome_log.score_handoffs(self.store, records)
        except Exception as exc:  # scoring never fails an ingestion; the warning says what was not scored
            log.warning("deliveries of %d %s not scored: %s", len(records), "handoff" if len(records) == 1
                        else "handoffs", str(exc).strip() or type(exc).__name__)

    def _close_outcomes(self) -> None:
        """Stop the delivery writer (what is queued is written first)."""
        if self._deliveries is not None:
            self._deliveries.close()
            self._deliveries = None

    def tune(self, *, seed: int = 0, progress: Callable[[int, int], None] | None = None,
             config: ContextConfig | None = None) -> TuneResult:
        """Fit the file ranking's weights on the finished history by replay
        (:mod:`ctxgraph.compute.tune`), starting from the weights of ``config``
        (this call's settings; default: the service's);
        ``progress(done, total)`` follows the replayed queries.
        Nothing is written: the caller keeps ``result.weights`` (``ctxgraph
        tune`` writes them to the settings file)."""
        from ctxgraph.compute.tune import tune

        tasks, files = self.store.replay_corpus()
        return tune(tasks, files, (config or self.config).ranking, seed=seed, progress=progress)


def _since(value: str | datetime | None) -> str | None:
    """``value`` as the ISO text deliveries' times compare with, or an error naming it."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidArgumentError(f"since: {value!r} is not a date (YYYY-MM-DD) or an ISO time") from None
    if not isinstance(value, datetime):
        raise InvalidArgumentError(f"since: expected a date or an ISO time, got {type(value).__name__}")
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.isoformat(timespec="microseconds").replace("+00:00", "Z")


__all__ = ["FeedbackMixin"]
