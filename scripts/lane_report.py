"""Run several make targets one after another and print how each ended.

`make spark4-lane` uses it: every step runs even when an earlier one failed (a failing
Thrift step says nothing about the Delta lane), and the summary gives each step's exit
code and minutes. The exit code is non-zero when any step failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def main(targets: list[str]) -> int:
    make = os.environ.get("MAKE", "make")
    results: list[tuple[str, int, float]] = []
    for target in targets:
        print(f"\n=== {target}", flush=True)
        started = time.monotonic()
        code = subprocess.call([make, "--no-print-directory", target])
        results.append((target, code, time.monotonic() - started))
    print("\nlane summary:")
    for target, code, seconds in results:
        print(f"  {'ok  ' if code == 0 else 'FAIL'} {target:<20} {seconds / 60:5.1f} min")
    total = sum(seconds for _, _, seconds in results)
    print(f"  total {total / 60:.1f} min")
    return max((code for _, code, _ in results), default=0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
