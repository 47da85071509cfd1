"""A graceful stop of ``ctxgraph mcp --http`` on SIGTERM (or SIGINT), within a bound.

1. The signal starts the drain (:class:`~ctxgraph.mcp.front.Drain`): a new
   request to the MCP path gets 503, ``/readyz`` answers 503 "shutting down",
   and the requests already in flight go on.
2. Once none is in flight, or when :data:`CLOSING_SECONDS` of the bound are
   left, the HTTP server stops: it stops listening, ends the open streams
   (an idle client's event stream) after at most a second, and the
   transport's sessions are closed; then the stores are.
3. A process still alive when the bound has passed (a call that would not
   finish) says so on standard error and exits at once with status 1: a
   handoff being ingested then is not committed (each is one transaction),
   so none is half written, and its client sees its connection end.

A second signal during the drain stops the server at once (step 2).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from types import FrameType

import uvicorn

from ctxgraph.mcp.front import Drain
from ctxgraph.mcp.startup import say

#: Seconds of the bound kept for step 2 (or a fifth of the bound, when that is less).
CLOSING_SECONDS = 2.0
#: At most this long is given to the streams still open when the server stops.
STREAM_SECONDS = 1.0


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class DrainingServer(uvicorn.Server):
    """uvicorn's server, stopped by a signal through the drain (see the module)."""

    def __init__(self, config: uvicorn.Config, drain: Drain, bound: float) -> None:
        super().__init__(config)
        self.drain = drain
        self.bound = bound
        self.closing = min(CLOSING_SECONDS, bound / 5)
        self.signal: int | None = None
        self.deadline = 0.0
        self.announced = False
        self.drained = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """The signal handler: starts the drain; a second signal stops at once."""
        if self.drain.draining:
            self.should_exit = True
            self.force_exit = True
            return
        self.signal = sig
        self.deadline = time.monotonic() + self.bound
        self.drain.draining = True
        threading.Thread(target=self._watchdog, name="ctxgraph-shutdown", daemon=True).start()

    async def on_tick(self, counter: int) -> bool:
        if self.drain.draining and not self.should_exit:
            if not self.announced:
                self.announced = True
                say(f"{_signal_name(self.signal or signal.SIGTERM)}: shutting down ({self.drain.in_flight} "
                    f"request(s) in flight; new ones refused; exit within {self.bound:g} s)")
            left = self.deadline - time.monotonic()
            if self.drain.in_flight == 0 or left <= self.closing:
                self.drained = self.drain.in_flight == 0
                self.config.timeout_graceful_shutdown = max(0.1, min(STREAM_SECONDS, left / 2))  # type: ignore[assignment]
                self.should_exit = True
        return await super().on_tick(counter)

    def _watchdog(self) -> None:
        left = self.deadline - time.monotonic()
        if left > 0:
            time.sleep(left)
        say(f"error: not stopped within {self.bound:g} s ({self.drain.in_flight} request(s) still in flight): "
            "exiting now; what they were writing is not committed")
        os._exit(1)
