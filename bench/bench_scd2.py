"""Benchmark: `history: scd2` batches each changing 1% of N keys (default 1,000,000).

Each batch holds only the changed keys (an incremental model's output) with a later
effective time, so a run closes 1% of the open intervals and opens as many new ones.
Prints the median of three batches against the rewrite lower bound: a plain CREATE TABLE
AS SELECT copy of the same table (median of three) -- the least work any rewrite of that
table can do.

Everything runs in one process on the embedded Spark session (one JVM), so the figures
compare materialization times, not JVM start-up. `--plans` switches Spark's UI on and
prints what the last batch cost Spark (stages, shuffles, window operators, scans of the
table) and the same per SQL execution. Run:
    .venv/bin/python bench/bench_scd2.py [--rows 1000000] [--format parquet] [--plans]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from harness import (
    dbt,
    dbt_run,
    fixed_cost,
    plan_summary,
    report,
    spark_ui_executions,
    statement_profile,
    statement_text,
    write_project,
)

KEYS_DEFAULT = 1_000_000
BATCHES = 3

SCD2_MODEL = """
{{{{ config(materialized='mutable_table', primary_key=['item_id'], history='scd2',
            file_format='{fmt}') }}}}
select * from {{{{ var('source') }}}}
"""


def table_scans(execution: dict) -> int:
    """Scans of the history table in an execution's final plan (its graph's nodes; the
    plan text of an adaptive query also lists the initial plan's scans)."""
    return sum(
        n["nodeName"].startswith("Scan ") and bool(re.search(r"[/.]item_history\b", n["nodeName"]))
        for n in execution.get("nodes", [])
    )


def print_plans(spark, executions: list[dict]) -> None:
    """What the last batch cost Spark, in total and per SQL execution that ran stages
    (the heaviest first): exchanges, window operators and scans of the history table."""
    summary = plan_summary(spark, executions, "item_history")
    summary["target_scans"] = sum(table_scans(e) for e in executions)
    summary["windows"] = sum(n["nodeName"] == "Window" for e in executions for n in e["nodes"])
    print(f"plan of the last batch: {json.dumps(summary)}")
    for e in sorted(executions, key=lambda e: -len(e.get("nodes", []))):
        one = plan_summary(spark, [e], "item_history")
        if not one["stages"]:
            continue
        windows = sum(n["nodeName"] == "Window" for n in e["nodes"])
        text = statement_text(e.get("description", ""))[:70]
        print(
            f"  stages {one['stages']:2d}  exchanges {one['shuffles']:2d}  windows {windows:2d}"
            f"  scans {table_scans(e)}  {text}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", "--rows", type=int, default=KEYS_DEFAULT)
    parser.add_argument("--format", default="parquet")
    parser.add_argument(
        "--plans",
        action="store_true",
        help="Spark's UI on: print the last batch's stages, shuffles, windows and table scans",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary project")
    args = parser.parse_args()
    step = 100  # every 100th key changes: 1%

    work = Path(tempfile.mkdtemp(prefix="jammi-bench-scd2-"))
    project = work / "project"
    (project / "models").mkdir(parents=True)
    write_project(
        project, "bench_scd2", work / "spark", {"spark.ui.enabled": "true"} if args.plans else {}
    )
    (project / "models" / "item_history.sql").write_text(SCD2_MODEL.format(fmt=args.format))
    (project / "models" / "item_history_fixed.sql").write_text(SCD2_MODEL.format(fmt=args.format))
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

    try:
        dbt(project, "debug")  # opens the embedded session; data is made on the same one
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        spark.sql("create schema if not exists bench")
        spark.sql(
            f"""create table bench.items_v1 using parquet as
            select id as item_id, concat('tier-', id % 5) as price_tier,
                   concat('avail-', id % 3) as availability, cast(1000 as bigint) as valid_from
            from range({args.keys})"""
        )
        for batch in range(2, 2 + BATCHES):
            spark.sql(
                f"""create table bench.items_v{batch} using parquet as
                select id as item_id, concat('tier-', (id + {batch}) % 5) as price_tier,
                       concat('avail-', id % 3) as availability,
                       cast({batch * 1000} as bigint) as valid_from
                from range({args.keys}) where id % {step} = 0"""
            )
        changed = spark.sql("select count(*) from bench.items_v2").collect()[0][0]
        load = dbt_run(
            project, "run", "-s", "item_history", "--vars", json.dumps({"source": "bench.items_v1"})
        )
        runs, executions = [], []
        for batch in range(2, 2 + BATCHES):
            seen = {e["id"] for e in spark_ui_executions(spark)} if args.plans else set()
            variables = json.dumps({"source": f"bench.items_v{batch}"})
            runs.append(dbt_run(project, "run", "-s", "item_history", "--vars", variables))
            if args.plans:
                executions = [e for e in spark_ui_executions(spark) if e["id"] not in seen]
        copies = []
        for i in range(BATCHES):
            start = time.perf_counter()
            spark.sql(
                f"create table bench.copy_{i} using parquet as select * from bench.item_history"
            ).collect()
            copies.append(time.perf_counter() - start)
        # the same model on 10 keys, batches of one changed key: what any run costs
        tiny = ["(select * from bench.items_v1 where item_id < 10)"]
        tiny += [
            f"(select * from bench.items_v{b} where item_id = 0)" for b in range(2, 2 + BATCHES)
        ]
        fixed = fixed_cost(project, "item_history_fixed", tiny)
        total, open_rows, closed_at_2000 = spark.sql(
            """select count(*), count_if(valid_to is null), count_if(valid_to = 2000)
               from bench.item_history"""
        ).collect()[0]
        expected = (args.keys + BATCHES * changed, args.keys, changed)
        if (total, open_rows, closed_at_2000) != expected:
            raise SystemExit(
                f"scd2 history wrong: {(total, open_rows, closed_at_2000)} != {expected}"
            )
        ours, ctas = statistics.median([r.execution for r in runs]), statistics.median(copies)
        print(f"keys: {args.keys:,}  changed keys per batch: {changed:,}  format: {args.format}")
        print(f"initial load (scd2, {args.keys:,} open intervals): {load.execution:.2f}s")
        print(f"scd2 batch (close + open {changed:,}), median of {BATCHES}: {ours:.2f}s")
        print(f"  runs: {', '.join(f'{r.execution:.2f}s' for r in runs)}")
        print(f"rewrite lower bound, CREATE TABLE AS SELECT copy, median of {BATCHES}: {ctas:.2f}s")
        print(f"ratio scd2 batch / CTAS copy: {ours / ctas:.2f}x")
        print(f"fixed cost of a run (10 keys, median of {BATCHES}): {fixed:.2f}s")
        print(f"ratio (scd2 batch - fixed) / CTAS copy: {(ours - fixed) / ctas:.2f}x")
        print(f"history after the batches: {total:,} rows, {open_rows:,} open -> correct")
        print(f"scd2 batch: {statement_profile(runs[-1], 30)}")
        if args.plans:
            print_plans(spark, executions)
        report(
            f"scd2 batch 1% ({args.format})",
            args.keys,
            ours,
            ctas,
            "<= 2.0x CTAS (at 10M)",
            statements=len(runs[-1].statements),
            fixed=round(fixed, 3),
        )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
