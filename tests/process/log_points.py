"""Points of a running `dbt run` found in its own dbt.log, which dbt writes as it goes:
every statement is logged when it is sent and its "SQL status" when it returns. A kill
timed from these lines lands in a named phase of the run (after the version write, in
the commit, after it) whatever the machine's load, where a fraction of a measured run's
duration drifts with it. Used by the crash lane (SIGKILL of dbt and its JVM) and by the
cluster faults (faults.py)."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from tests.process.harness import DbtProject, DbtResult

POLL_S = 0.02  # how often a pending fault looks at the clock and the run's log
STATUS = re.compile(r"SQL status: \w+ in ([0-9.]+) seconds")


def statement_seconds(log: str, statement: str) -> Optional[float]:
    """How long the first statement matching ``statement`` took in a run's dbt.log."""
    sent = re.search(statement, log, re.IGNORECASE)
    status = STATUS.search(log, sent.end()) if sent else None
    return float(status.group(1)) if status else None


class LogFollower:
    """Reads a run's dbt.log as it grows: when was ``statement`` sent, and has its result
    been logged since."""

    def __init__(self, path: Path, statement: str) -> None:
        self.path, self.statement = path, re.compile(statement, re.IGNORECASE)
        self.read, self.text = 0, ""
        self.sent_at: Optional[float] = None  # monotonic time it was first seen
        self.sent_end = -1

    def poll(self) -> None:
        try:
            with open(self.path, "rb") as log:
                log.seek(self.read)
                chunk = log.read()
        except OSError:
            return  # not written yet
        self.read += len(chunk)
        self.text += chunk.decode(errors="replace")
        if self.sent_at is None:
            match = self.statement.search(self.text)
            if match:
                self.sent_at, self.sent_end = time.monotonic(), match.end()

    def completed(self) -> bool:
        return self.sent_at is not None and STATUS.search(self.text, self.sent_end) is not None


@dataclass(frozen=True)
class KillPoint:
    """Where a SIGKILL lands: once the run has sent ``statement`` (a regex of dbt.log),
    after ``fraction`` of the time that statement took in an earlier run of the same
    work; with ``completed``, as soon as the run has logged the statement's result."""

    label: str
    statement: str
    fraction: float = 0.0
    completed: bool = False

    def delay(self, reference: Optional[DbtResult]) -> float:
        """Seconds after the statement is sent (``reference``: a run that ran it)."""
        if not self.fraction:
            return 0.0
        took = statement_seconds(reference.log(), self.statement) if reference else None
        return self.fraction * (took or 0.0)


def kill_on_log(
    project: DbtProject, args: list[str], tag: str, point: KillPoint, delay: float = 0.0
) -> Optional[DbtResult]:
    """Start `dbt <args>` and SIGKILL it (dbt and its JVM) at ``point``, ``delay`` seconds
    after the statement was sent. None when it was killed; the run's result when it
    ended before the point came (the caller tries again)."""
    process = project.start(args, tag)
    follower = LogFollower(process.scratch / "logs" / "dbt.log", point.statement)
    while process.popen.poll() is None:
        follower.poll()
        if point.completed:
            due = follower.completed()
        else:
            due = follower.sent_at is not None and time.monotonic() >= follower.sent_at + delay
        if due:
            process.kill()
            return None
        try:
            process.popen.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            pass
    return process.wait()
