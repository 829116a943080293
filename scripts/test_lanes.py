"""Run lanes two at a time and print one summary of their exit codes and minutes.

    python scripts/test_lanes.py --slots 2 --gate        # `make test`: the gate
    python scripts/test_lanes.py --slots 2 --full        # `make test-full`: every lane
    python scripts/test_lanes.py --slots 2 delta-lane functional ...

The gate's and the full matrix's lanes are listed in scripts/lane_map.py.

The lanes start in the order given, each as soon as one of the `--slots` running lanes
ends (a queue, not fixed tracks): give the longest first, so that the short ones fill
the ends. A lane's output goes to a log file and is printed whole when the lane ends, so
lanes never interleave their lines. Every lane runs whatever the others do; the exit
code is non-zero when any lane failed.

Why a queue: on 2 cores the lanes are CPU-bound (a lane's JVM, or a Thrift server and
its executors), so two at a time keep both cores busy, and the order decides how much
of the end runs with one core idle. Measured on 2 cores (clean clones of main): two
fixed tracks with the Thrift lanes alone after them took 56.4 minutes (2026-11-25
05:42); this queue took 54.4 with more tests (Python models, snapshot feeds;
2026-11-25 09:06), 58.2 with the connect lanes added (2026-11-25 11:53), and 63.9 with
the Thrift races over Connect (2026-11-25 16:17; docs/testing.md). A lane beside the
Thrift lane runs about 1.4 times as long as beside an embedded lane (the Delta lane
26.9 minutes against 19.3), and two cluster lanes side by side 1.7 to 1.9 times as long
as alone: the machine, not the order, is the limit.
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

from lane_map import FULL_LANES, GATE_LANES  # scripts/ is this script's directory

_PRINT = threading.Lock()


def run_lane(target: str, logs: Path, started_all: float) -> tuple[str, int, float, float]:
    make = os.environ.get("MAKE", "make")
    log = logs / f"{target}.log"
    started = time.monotonic()
    with _PRINT:
        print(f"=== {target}: started at {(started - started_all) / 60:.1f} min", flush=True)
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
    return target, code, started - started_all, seconds


def run_queue(queue: list[str], lock: threading.Lock, logs: Path, started: float, results: list):
    """One slot: take the next lane off the shared queue until it is empty."""
    while True:
        with lock:
            if not queue:
                return
            target = queue.pop(0)
        results.append(run_lane(target, logs, started))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lanes", nargs="*", help="make targets, longest first")
    parser.add_argument("--slots", type=int, default=2, help="lanes running at once")
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--gate", action="store_true", help="lane_map.GATE_LANES")
    chosen.add_argument("--full", action="store_true", help="lane_map.FULL_LANES")
    args = parser.parse_args(argv)
    lanes = list(args.lanes) or list(GATE_LANES if args.gate else FULL_LANES if args.full else ())
    if not lanes:
        parser.error("name the lanes, or --gate, or --full")
    logs = Path(tempfile.mkdtemp(prefix="jammi-lanes-"))
    queue, lock = lanes, threading.Lock()
    results: list[tuple[str, int, float, float]] = []
    started = time.monotonic()
    slots = [
        threading.Thread(target=run_queue, args=(queue, lock, logs, started, results))
        for _ in range(max(args.slots, 1))
    ]
    for slot in slots:
        slot.start()
    for slot in slots:
        slot.join()
    total = time.monotonic() - started
    print(f"\nlanes ({args.slots} at a time, in the order they started):")
    for target, code, start, seconds in sorted(results, key=lambda r: r[2]):
        print(
            f"  {'ok  ' if code == 0 else 'FAIL'} {target:<22} {seconds / 60:5.1f} min "
            f"(from {start / 60:4.1f} to {(start + seconds) / 60:4.1f})"
        )
    print(f"  total {total / 60:.1f} min")
    return max((code for _, code, _, _ in results), default=0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
