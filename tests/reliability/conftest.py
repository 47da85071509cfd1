"""Reliability tests: export/import round trips, fuzzing, injection, CLI faults,
server kills, concurrent writers, durability, secrets and read-only access.

The fuzz tests count the cases they try in ``_reliability.FUZZ_CASES``, the
fault tests the faults they inject (kills, concurrent writers) in
``_faults.FAULTS``; the totals are printed at the end of the run.
"""

from __future__ import annotations

import pytest
from _faults import FAULTS
from _reliability import FUZZ_CASES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FAULTS:
        terminalreporter.write_sep("-", "faults injected")
        for name, count in sorted(FAULTS.items()):
            terminalreporter.write_line(f"{count:>6}  {name}")
    if not FUZZ_CASES:
        return
    terminalreporter.write_sep("-", "fuzz cases tried")
    for name, count in sorted(FUZZ_CASES.items()):
        terminalreporter.write_line(f"{count:>6}  {name}")
    terminalreporter.write_line(f"{sum(FUZZ_CASES.values()):>6}  in all")
