"""`make bench`: every benchmark at one size, one table.

Each benchmark runs in its own process (its own JVM and throwaway project) at the size
given (--rows, default 1,000,000; several sizes comma-separated) and prints BENCH lines
(harness.report); this collects them into one table: benchmark, rows, our seconds,
baseline seconds, ratio (ours / baseline, measured in the same process) and the goal.
The statement counts per materialization (bench_statements.py) follow the table.
    .venv/bin/python bench/run_all.py [--rows 1000000,10000000]
        [--only upsert,rules,scd2,topic,delta] [--spark 3.5]

Each benchmark runs on the home line, Spark 4.1 (this interpreter, `.venv`), unless
``--spark 3.5`` runs it on the compatibility line's environment (`.venv-spark35`,
`make spark35-venv`; docs/compatibility.md), with that line's Delta and Iceberg jars.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from itertools import product
from pathlib import Path

from paired import PairedFigure  # bench/ is this script's directory

HERE = Path(__file__).resolve().parent
# The Spark lines a benchmark runs on: the home line is this interpreter's environment.
LINE_PYTHONS = {"4.1": None, "3.5": HERE.parent / ".venv-spark35" / "bin" / "python"}

BENCHMARKS = {
    "upsert": ["bench_mutable_upsert.py"],
    "rules": ["bench_row_rules.py"],  # merge_functions and ttl_ms against a plain upsert
    "scd2": ["bench_scd2.py"],
    "topic": ["bench_topic.py"],
    # against dbt-spark's merge on the same format; jars: JAMMI_*_JARS or .jars/ (make jars)
    "delta": ["bench_merge_peer.py"],
    "iceberg": ["bench_merge_peer.py --format iceberg"],
    # 10 rows whatever --rows says: one run's fixed cost over Spark Connect against Thrift
    "connect": ["bench_connect.py"],
}


def line_python(line: str) -> str:
    """The interpreter of the Spark line ``line`` (SystemExit naming the make target that
    installs it when it is missing)."""
    if line not in LINE_PYTHONS:
        raise SystemExit(f"bench: --spark takes one of {', '.join(LINE_PYTHONS)}, not {line!r}")
    python = LINE_PYTHONS[line]
    if python is None:
        return sys.executable
    if not python.is_file():
        raise SystemExit(f"bench: no {python.parent.parent.name}: run `make spark35-venv` first")
    return str(python)


def run(script: str, rows: int, python: str) -> tuple[list[dict], float, str]:
    """One benchmark process: its BENCH results, wall seconds, and the tail of its output
    when it failed."""
    started = time.monotonic()
    name, *options = script.split()
    done = subprocess.run(
        [python, str(HERE / name), *options, "--rows", str(rows)],
        capture_output=True,
        text=True,
        cwd=HERE,
    )
    results = [
        json.loads(line[len("BENCH ") :])
        for line in done.stdout.splitlines()
        if line.startswith("BENCH ")
    ]
    failure = "" if done.returncode == 0 else (done.stdout + done.stderr)[-2000:]
    return results, time.monotonic() - started, failure


def table(results: list[dict]) -> str:
    lines = [
        "| benchmark | rows | ours (s) | baseline (s) | ratio | run's fixed cost (s) "
        "| ratio without it | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        fixed, net = "", ""
        # the median of per-batch ratios, where the benchmark pairs its batches
        paired = f" (paired {r['paired']:.2f}x)" if "paired" in r else ""
        if "pairs" in r:  # paired, alternating rounds (bench/paired.py), every process's
            paired = f" {PairedFigure(tuple(r['pairs'])).describe()}"
        if "fixed" in r and r["baseline"]:
            fixed = f"{r['fixed']:.2f}"
            net = f"{(r['ours'] - r['fixed']) / r['baseline']:.2f}x"
        lines.append(
            f"| {r['benchmark']} | {r['rows']:,} | {r['ours']:.2f} | {r['baseline']:.2f} "
            f"| {r['ratio']:.2f}x{paired} | {fixed} | {net} | {r['goal']} |"
        )
    return "\n".join(lines)


def pooled(results: list[dict]) -> list[dict]:
    """One result per benchmark and size: a paired one's pairs pooled over the processes
    that ran it, its ratio their median, each side's seconds the median of the
    processes' medians; the others as they came."""
    groups: dict[tuple[str, int], list[dict]] = {}
    for result in results:
        groups.setdefault((result["benchmark"], result["rows"]), []).append(result)
    out: list[dict] = []
    for group in groups.values():
        if "pairs" not in group[0]:
            out.extend(group)
            continue
        pairs = [p for result in group for p in result["pairs"]]
        out.append(
            {
                **group[0],
                "pairs": pairs,
                "processes": len(group),
                "ours": statistics.median(r["ours"] for r in group),
                "baseline": statistics.median(r["baseline"] for r in group),
                "ratio": round(PairedFigure(tuple(pairs)).median, 2),
            }
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000", help="sizes, comma-separated")
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="benchmarks to run")
    parser.add_argument("--no-statements", action="store_true")
    parser.add_argument("--spark", default="4.1", help="the Spark line: 4.1 (home) or 3.5")
    parser.add_argument(
        "--processes", type=int, default=2, help="processes per benchmark (pairs pooled)"
    )
    args = parser.parse_args()
    python = line_python(args.spark)
    sizes = [int(s) for s in args.rows.split(",")]
    results: list[dict] = []
    failed = False
    for size in sizes:
        for name in args.only.split(","):
            for script, process in product(BENCHMARKS[name], range(1, args.processes + 1)):
                found, seconds, failure = run(script, size, python)
                print(
                    f"{script} --rows {size:,} (process {process}): {len(found)} result(s) "
                    f"in {seconds:.0f}s"
                )
                if failure:
                    failed = True
                    print(f"FAILED:\n{failure}")
                results.extend(found)
    print()
    print(table(pooled(results)))
    if not args.no_statements:
        counts = subprocess.run(
            [python, str(HERE / "bench_statements.py")],
            capture_output=True,
            text=True,
            cwd=HERE,
        )
        print("\nstatements per run (second run of each model):")
        print(counts.stdout.strip() or counts.stderr[-2000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
