"""Process tests print one summary line per scenario at the end of the session, passed
or failed (the counts are the point: lost updates, dropped tables, mixed states)."""

from __future__ import annotations

from tests.process.harness import SUMMARY


def pytest_terminal_summary(terminalreporter):
    if SUMMARY:
        terminalreporter.section("process test summary")
        for line in SUMMARY:
            terminalreporter.write_line(line)
