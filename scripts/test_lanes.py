"""Run `make test`'s lanes and print one summary of their exit codes and minutes.

    python scripts/test_lanes.py "spark4-check thrift-lane ..." ["other track" ...]

Each positional argument is a track: its make targets run one after another, and
several tracks run at the same time. A lane's output goes to a log file and is printed
whole when the lane ends, so lanes never interleave their lines. Every lane runs
whatever the others do; the exit code is non-zero when any lane failed.

`make test` runs the embedded lanes in two tracks and the Thrift lanes alone after
them (`--then`). Measured on 2 cores (2026-11-25, clean clone): crash-lane beside
functional took 14.0 minutes for both (10.8 and 14.0), where one after the other they
took 19. Lanes with a standalone cluster or a server beside another lane were slower
than alone (2026-11-24: the Thrift lane 15.1 minutes beside the Delta lane, about 9
alone), so they keep the machine to themselves.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

_PRINT = threading.Lock()


def run_lane(target: str, logs: Path) -> tuple[str, int, float]:
    make = os.environ.get("MAKE", "make")
    log = logs / f"{target}.log"
    started = time.monotonic()
    with _PRINT:
        print(f"=== {target}: started", flush=True)
    with open(log, "wb") as sink:
        code = subprocess.call(
            [make, "--no-print-directory", target],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    seconds = time.monotonic() - started
    with _PRINT:
        print(f"\n=== {target}: exit {code}, {seconds / 60:.1f} min", flush=True)
        sys.stdout.write(log.read_text(errors="replace"))
        print(f"=== {target}: end of output", flush=True)
    return target, code, seconds


def run_track(targets: list[str], logs: Path, results: list) -> None:
    for target in targets:
        results.append(run_lane(target, logs))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tracks", nargs="+", help="space-separated make targets per track")
    parser.add_argument("--then", default="", help="make targets run alone, afterwards")
    args = parser.parse_args(argv)
    logs = Path(tempfile.mkdtemp(prefix="jammi-lanes-"))
    results: list[tuple[str, int, float]] = []
    started = time.monotonic()
    threads = [
        threading.Thread(target=run_track, args=(track.split(), logs, results))
        for track in args.tracks
        if track.split()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    side_by_side = time.monotonic() - started
    run_track(args.then.split(), logs, results)
    total = time.monotonic() - started
    print("\nlanes:")
    for target, code, seconds in results:
        print(f"  {'ok  ' if code == 0 else 'FAIL'} {target:<22} {seconds / 60:5.1f} min")
    print(
        f"  side by side {side_by_side / 60:.1f} min, then alone "
        f"{(total - side_by_side) / 60:.1f} min; total {total / 60:.1f} min"
    )
    return max((code for _, code, _ in results), default=0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
