"""Reliability tests: export/import round trips, fuzzing, injection, CLI faults.

The fuzz tests count the cases they try in ``_reliability.FUZZ_CASES``; the
totals are printed at the end of the run under "fuzz cases tried".
"""

from __future__ import annotations

import pytest
from _reliability import FUZZ_CASES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FUZZ_CASES:
        return
    terminalreporter.write_sep("-", "fuzz cases tried")
    for name, count in sorted(FUZZ_CASES.items()):
        terminalreporter.write_line(f"{count:>6}  {name}")
    terminalreporter.write_line(f"{sum(FUZZ_CASES.values()):>6}  in all")
