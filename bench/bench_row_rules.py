"""Benchmark: what merge_functions, ttl_ms and changelog cost on top of a plain upsert.

Four mutable tables of N rows (default 1,000,000) receive the same three batches, each
changing the same 1% of keys:
  plain     one row per changed key, replacing the stored row (the baseline);
  counters  three increment rows per changed key, combined by merge_functions
            (sum, min, max) with the stored row, versioned;
  ttl       the plain batches plus ttl_ms on a last-seen column: every batch also
            expires about 5% of the table (rows age by a day per batch);
  changelog the plain batches with changelog: true (each batch also publishes its
            changes, with the previous values, to the table's changelog topic).
Each table's median batch time is compared with the plain table's, in the same process;
`paired` is the median of the per-batch ratios (each rule's batch against the plain batch
run just before it), which the machine's drift over the run moves less. Every result is
checked (counter totals, expired row counts, changelog events). Run:
    .venv/bin/python bench/bench_row_rules.py [--rows 1000000] [--format parquet]
        [--batches 5] [--only ttl,changelog] [--plans]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from harness import (
    dbt,
    dbt_run,
    enable_spark_ui,
    plan_summary,
    report,
    spark_ui_executions,
    statement_profile,
    write_project,
)

ROWS_DEFAULT = 1_000_000
BATCHES_DEFAULT = 5
RULES = ("counters", "ttl", "changelog")
DAY_MS = 86_400_000
AGE_DAYS = 20  # stored rows were last seen 0..19 days ago

PLAIN = """
{{{{ config(materialized='mutable_table', primary_key=['id'], file_format='{fmt}') }}}}
select id, clicks, first_ms, last_ms from {{{{ var('source') }}}}
"""

COUNTERS = """
{{{{ config(materialized='mutable_table', primary_key=['id'], file_format='{fmt}',
            version_column='v',
            merge_functions={{'clicks': 'sum', 'first_ms': 'min', 'last_ms': 'max'}}) }}}}
select id, clicks, first_ms, last_ms, v from {{{{ var('source') }}}}
"""

TTL = """
{{{{ config(materialized='mutable_table', primary_key=['id'], file_format='{fmt}',
            ttl_ms=var('ttl_ms'), ttl_column='last_ms') }}}}
select id, clicks, first_ms, last_ms from {{{{ var('source') }}}}
"""


CHANGELOG = """
{{{{ config(materialized='mutable_table', primary_key=['id'], file_format='{fmt}',
            changelog=true) }}}}
select id, clicks, first_ms, last_ms from {{{{ var('source') }}}}
"""


def make_data(spark, rows: int, step: int, batches: int) -> None:
    now = "unix_millis(current_timestamp())"
    spark.sql("create schema if not exists bench")
    spark.sql(
        f"""create table bench.base using parquet as
        select id, 1 as clicks, {now} - (id % {AGE_DAYS}) * {DAY_MS} - 1000 as first_ms,
               {now} - (id % {AGE_DAYS}) * {DAY_MS} as last_ms, 0L as v
        from range({rows})"""
    )
    for batch in range(1, batches + 1):
        spark.sql(
            f"""create table bench.increments_{batch} using parquet as
            select id, 1 as clicks, {now} as first_ms, {now} + r as last_ms,
                   cast({batch} * 10 + r as bigint) as v
            from range({rows}) cross join (select explode(array(0, 1, 2)) as r)
            where id % {step} = 0"""
        )
        spark.sql(
            f"""create table bench.changes_{batch} using parquet as
            select id, sum(clicks) as clicks, min(first_ms) as first_ms,
                   max(last_ms) as last_ms, max(v) as v
            from bench.increments_{batch} group by id"""
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=ROWS_DEFAULT)
    parser.add_argument("--format", default="parquet")
    parser.add_argument("--batches", type=int, default=BATCHES_DEFAULT)
    parser.add_argument("--only", default=",".join(RULES), help="rules to measure")
    parser.add_argument(
        "--plans",
        action="store_true",
        help="Spark's UI on: each model's jobs, stages, shuffles and table scans, last batch",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary project")
    args = parser.parse_args()
    if not 1 <= args.batches < AGE_DAYS:
        raise SystemExit(f"--batches must be 1..{AGE_DAYS - 1}: a batch ages the rows a day")
    rules = [r for r in args.only.split(",") if r]
    if not rules or set(rules) - set(RULES):
        raise SystemExit(f"--only takes some of {', '.join(RULES)}")
    batches = args.batches
    step = 100

    work = Path(tempfile.mkdtemp(prefix="jammi-bench-"))
    project = work / "project"
    (project / "models").mkdir(parents=True)
    write_project(project, "bench", work / "spark")
    if args.plans:
        enable_spark_ui(project)
    models = (("plain", PLAIN), ("counters", COUNTERS), ("ttl", TTL), ("changelog", CHANGELOG))
    for name, sql in models:
        (project / "models" / f"{name}.sql").write_text(sql.format(fmt=args.format))
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

    plans: dict[str, dict] = {}

    def apply(model: str, source: str, ttl_days: int = AGE_DAYS + 10):
        variables = json.dumps({"source": source, "ttl_ms": ttl_days * DAY_MS})
        seen = {e["id"] for e in spark_ui_executions(spark)} if args.plans else set()
        run = dbt_run(project, "run", "-s", model, "--vars", variables)
        if args.plans:  # the last batch's plans are printed
            executions = [e for e in spark_ui_executions(spark) if e["id"] not in seen]
            plans[model] = plan_summary(spark, executions, model)
        return run

    try:
        dbt(project, "debug")
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        make_data(spark, args.rows, step, batches)
        changed = spark.sql("select count(*) from bench.changes_1").collect()[0][0]

        runs: dict[str, list] = {"plain": [], **{rule: [] for rule in rules}}
        for model in runs:
            apply(model, "bench.base")
        for batch in range(1, batches + 1):
            runs["plain"].append(apply("plain", f"bench.changes_{batch}"))
            if "counters" in runs:
                runs["counters"].append(apply("counters", f"bench.increments_{batch}"))
            if "ttl" in runs:
                # one day older per batch: the rows last seen AGE_DAYS - batch days ago expire
                runs["ttl"].append(apply("ttl", f"bench.changes_{batch}", AGE_DAYS - batch))
            if "changelog" in runs:
                runs["changelog"].append(apply("changelog", f"bench.changes_{batch}"))
        check_results(spark, runs, args.rows, step, batches, changed)
        for model, summary in plans.items():
            print(f"plan {model}, last batch: {json.dumps(summary)}", flush=True)
        report_results(runs, args.rows, changed, args.format)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def check_results(spark, runs: dict, rows: int, step: int, batches: int, changed: int) -> None:
    """Fails when a measured table does not hold what its batches should leave."""
    if "counters" in runs:
        clicks = spark.sql("select sum(clicks) from bench.counters").collect()[0][0]
        expected_clicks = rows + batches * 3 * changed
        if clicks != expected_clicks:
            raise SystemExit(f"counters: {clicks} clicks, expected {expected_clicks}")
        print(f"counters: {clicks:,} clicks as expected")
    if "ttl" in runs:
        kept = spark.sql("select count(*) from bench.ttl").collect()[0][0]
        expected_kept = spark.sql(
            f"""select count(*) from bench.base
                where id % {AGE_DAYS} < {AGE_DAYS - batches} or id % {step} = 0"""
        ).collect()[0][0]
        if kept != expected_kept:
            raise SystemExit(f"ttl: {kept} rows kept, expected {expected_kept}")
        print(f"ttl: {kept:,} rows kept as expected")
    if "changelog" in runs:
        backing = spark.sql(
            "select backing_table from bench.topics where relation_name = 'changelog'"
        ).collect()[0][0]
        published = spark.sql(
            f"select _offset, count(*), count_if(change_kind = 'update') from bench.{backing} "
            "group by _offset order by _offset"
        ).collect()
        expected_published = [(1, rows, 0)] + [
            (offset, changed, changed) for offset in range(2, batches + 2)
        ]
        if [tuple(r) for r in published] != expected_published:
            raise SystemExit(f"changelog: published {published}, expected {expected_published}")
        print(f"changelog: {batches + 1} versions published as expected")


GOALS = {
    "counters": ("merge_functions, 3 rows per changed key", "<= 1.3x plain upsert"),
    "ttl": ("ttl_ms, about 5% expired per batch", "<= 1.2x plain upsert"),
    "changelog": ("changelog: true, 1% of keys updated per batch", "<= 1.2x plain upsert"),
}


def report_results(runs: dict, rows: int, changed: int, fmt: str) -> None:
    """Each rule's median against the plain upsert's, and the median of the per-batch
    ratios (`paired`)."""
    median = {m: statistics.median(r.execution for r in rs) for m, rs in runs.items()}
    print(f"rows: {rows:,}  changed keys per batch: {changed:,}  format: {fmt}")
    for model, seconds in median.items():
        times = ", ".join(f"{r.execution:.2f}s" for r in runs[model])
        print(f"{model}: median {seconds:.2f}s ({times})")
    for rule in (r for r in runs if r != "plain"):
        print(f"{rule}: {statement_profile(runs[rule][-1], 6)}")
        pairs = [r.execution / p.execution for r, p in zip(runs[rule], runs["plain"])]
        benchmark, goal = GOALS[rule]
        report(
            f"{benchmark} ({fmt})",
            rows,
            median[rule],
            median["plain"],
            goal,
            paired=round(statistics.median(pairs), 2),
        )


if __name__ == "__main__":
    main()
