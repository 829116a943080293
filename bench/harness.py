"""What the dbt-driven benchmarks share: a throwaway dbt project on the embedded session
(one JVM for dbt and the baselines) and an in-process dbt runner that reports times."""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

PROFILE = """
bench:
  target: dev
  outputs:
    dev:
      type: jammi
      method: session
      host: localhost
      schema: bench
      threads: 1
      session_dir: {state}
      server_side_parameters:
        spark.master: "local[2]"
        spark.driver.memory: "2g"
        spark.sql.shuffle.partitions: "8"
        spark.ui.showConsoleProgress: "false"
"""

PROJECT = """
name: {name}
version: "1.0"
config-version: 2
profile: bench
model-paths: ["models"]
"""


def write_project(
    project: Path, name: str, state: Path, parameters: dict[str, str] | None = None
) -> None:
    """profiles.yml and dbt_project.yml of a benchmark project; `parameters` are added
    to the session's server_side_parameters (e.g. Delta's jars and settings)."""
    extra = "".join(f'        {k}: "{v}"\n' for k, v in (parameters or {}).items())
    (project / "profiles.yml").write_text(PROFILE.format(state=state) + extra)
    (project / "dbt_project.yml").write_text(PROJECT.format(name=name))


@dataclass
class DbtRun:
    """One in-process dbt invocation: wall seconds, the models' execution seconds and
    every SQL statement the adapter sent (text, seconds), in order."""

    wall: float
    execution: float
    statements: list[tuple[str, float]] = field(default_factory=list)


def dbt_run(project: Path, *args: str) -> DbtRun:
    """Run dbt in-process, recording the statements from dbt's SQLQuery/SQLQueryStatus
    events (the adapter sends every statement through dbt's connection manager)."""
    from dbt.cli.main import dbtRunner

    sent: list[str] = []
    statements: list[tuple[str, float]] = []

    def record(event) -> None:
        name = event.info.name
        if name == "SQLQuery":
            sent.append(event.data.sql)
        elif name == "SQLQueryStatus" and sent:
            statements.append((sent.pop(0), float(event.data.elapsed)))

    start = time.perf_counter()
    result = dbtRunner(callbacks=[record]).invoke(
        [*args, "--project-dir", str(project), "--profiles-dir", str(project), "--quiet"]
    )
    wall = time.perf_counter() - start
    if not result.success:
        raise SystemExit(f"dbt {' '.join(args)} failed: {result.exception}")
    results = getattr(result.result, "results", [])
    return DbtRun(wall, sum(r.execution_time for r in results), statements)


def dbt(project: Path, *args: str) -> tuple[float, float]:
    """Run dbt in-process; returns (wall seconds, the models' execution seconds)."""
    run = dbt_run(project, *args)
    return run.wall, run.execution


def fixed_cost(project: Path, model: str, sources: list[str]) -> float:
    """dbt's fixed cost of one run of `model`: the median execution time of its runs on
    the tiny `sources` (a few rows each) after the first, which creates the table. What
    a run pays whatever its size (dbt, Jinja, metadata statements, Spark's jobs)."""
    runs = [
        dbt_run(project, "run", "-s", model, "--vars", json.dumps({"source": source}))
        for source in sources
    ]
    return statistics.median(r.execution for r in runs[1:])


def statement_text(sql: str) -> str:
    """A statement on one line, without dbt's leading query comment."""
    return " ".join(re.sub(r"^/\*.*?\*/", "", sql.strip(), flags=re.S).split())


def statement_profile(run: DbtRun, top: int = 8) -> str:
    """The statement count and the slowest statements of a run, one line each."""
    lines = [f"{len(run.statements)} statements, {sum(s for _, s in run.statements):.2f}s in SQL"]
    for sql, seconds in sorted(run.statements, key=lambda s: -s[1])[:top]:
        lines.append(f"  {seconds:7.2f}s  {statement_text(sql)[:110]}")
    return "\n".join(lines)


def report(benchmark: str, rows: int, ours: float, baseline: float, goal: str, **extra) -> None:
    """One result line for `make bench` (bench/run_all.py collects the BENCH lines):
    ours and the baseline in seconds, measured in the same process; `fixed` (seconds,
    from fixed_cost) when the benchmark measured its run's fixed cost."""
    ratio = ours / baseline if baseline else float("inf")
    fields = {"benchmark": benchmark, "rows": rows, "ours": round(ours, 3)}
    fields.update(baseline=round(baseline, 3), ratio=round(ratio, 2), goal=goal, **extra)
    print("BENCH " + json.dumps(fields), flush=True)


def bench_fields(rounds) -> dict:
    """A paired benchmark's BENCH fields (bench/paired.py): each side's median seconds,
    the pair ratios run_all.py pools over processes, and each side's cost of running
    first."""
    from paired import BASELINE, OURS, first_cost, pair_ratios

    return {
        "ours_median": statistics.median(r.ours for r in rounds),
        "baseline_median": statistics.median(r.baseline for r in rounds),
        "pairs": [round(p, 4) for p in pair_ratios(rounds)],
        "first_cost_ours": round(first_cost(rounds, OURS), 3),
        "first_cost_baseline": round(first_cost(rounds, BASELINE), 3),
    }


def enable_spark_ui(project: Path) -> None:
    """Spark's UI on in a benchmark project's profile, so that spark_ui_executions can
    read the executed plans (the benchmarks' --plans)."""
    with (project / "profiles.yml").open("a") as profile:
        profile.write('        spark.ui.enabled: "true"\n')


def spark_ui_executions(spark) -> list[dict]:
    """Every SQL execution Spark's UI has recorded in this process (REST API), with its
    executed plan; needs `spark.ui.enabled` (bench_merge_peer.py --plans)."""
    from urllib.request import urlopen

    context = spark.sparkContext
    base = f"{context.uiWebUrl}/api/v1/applications/{context.applicationId}"
    with urlopen(f"{base}/sql?details=true&planDescription=true&length=100000") as answer:
        return json.load(answer)


def plan_summary(spark, executions: list[dict], table_dir: str) -> dict[str, int]:
    """What a run's SQL executions cost Spark: executions, jobs, stages run (skipped ones
    not counted), shuffles (Exchange nodes in the executed plans), broadcasts and scans
    of the table whose directory name is `table_dir` (its data files, not its logs)."""
    from urllib.request import urlopen

    context = spark.sparkContext
    base = f"{context.uiWebUrl}/api/v1/applications/{context.applicationId}"
    jobs = sorted(
        {j for e in executions for key in ("successJobIds", "failedJobIds") for j in e.get(key, [])}
    )
    stages = 0
    for job in jobs:
        with urlopen(f"{base}/jobs/{job}") as answer:
            stages += json.load(answer)["numCompletedStages"]
    nodes = [n["nodeName"] for e in executions for n in e.get("nodes", [])]
    scans = 0
    for e in executions:
        for block in re.split(r"\n\s*\n", e.get("planDescription", "")):
            head = block.strip().splitlines()[0] if block.strip() else ""
            # the table's data files, not Delta's log or the parquet version records
            data = "_delta_log" not in block and "_jammi_versions" not in block
            if re.match(r"\(\d+\) Scan ", head) and data:
                scans += bool(re.search(rf"[/.]{re.escape(table_dir)}\b", block))
    return {
        "executions": len(executions),
        "jobs": len(jobs),
        "stages": stages,
        "shuffles": sum(name == "Exchange" for name in nodes),
        "broadcasts": sum(name == "BroadcastExchange" for name in nodes),
        "target_scans": scans,
    }
