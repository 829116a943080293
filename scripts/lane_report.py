"""Run several make targets one after another and print how each ended.

`make spark35-gate`, `make spark35-lane` and `make spark43-lane` use it: every step runs
even when an earlier one failed (a failing Thrift step says nothing about the Delta
lane), and the summary gives each step's exit code, minutes and, for a pytest step,
its counts (pytest's last summary line: passed, failed, skipped, ...). The exit code is
non-zero when any step failed.

    python scripts/lane_report.py [--name NAME] TARGET...
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

# pytest's closing line, `-q` or not: "352 passed, 3 skipped in 5.21s (0:00:05)" or
# "==== 1 failed, 2 passed in 3.00s ====".
PYTEST_COUNTS = re.compile(
    r"^=*\s*((?:\d+ (?:passed|failed|skipped|deselected|xfailed|xpassed|errors?|warnings?)"
    r"(?:, )?)+) in [\d.]+s"
)


def pytest_counts(line: str) -> str | None:
    match = PYTEST_COUNTS.match(line.strip())
    return match.group(1) if match else None


def run_step(make: str, target: str) -> tuple[int, str]:
    """Run one target with its output passed through; its exit code and pytest counts."""
    counts: list[str] = []
    with subprocess.Popen(
        [make, "--no-print-directory", target],
        stdout=subprocess.PIPE,
        text=True,
        errors="replace",
        bufsize=1,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            found = pytest_counts(line)
            if found:
                counts.append(found)
    # Several pytest runs in one target: each one's counts, in order.
    return process.returncode, "; ".join(counts)


def main(argv: list[str]) -> int:
    name = "lane"
    if argv[:1] == ["--name"]:
        name, argv = argv[1], argv[2:]
    make = os.environ.get("MAKE", "make")
    results: list[tuple[str, int, float, str]] = []
    for target in argv:
        print(f"\n=== {target}", flush=True)
        started = time.monotonic()
        code, counts = run_step(make, target)
        results.append((target, code, time.monotonic() - started, counts))
    print(f"\n{name} summary:")
    for target, code, seconds, counts in results:
        status = "ok  " if code == 0 else "FAIL"
        print(f"  {status} {target:<20} {seconds / 60:5.1f} min  {counts}".rstrip())
    total = sum(seconds for _, _, seconds, _ in results)
    print(f"  total {total / 60:.1f} min")
    return max((code for _, code, _, _ in results), default=0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
