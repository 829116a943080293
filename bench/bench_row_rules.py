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
Each table's median batch time is compared with the plain table's, in the same process.
Every result is checked (counter totals, expired row counts, changelog events). Run:
    .venv/bin/python bench/bench_row_rules.py [--rows 1000000] [--format parquet]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from harness import dbt, dbt_run, report, statement_profile, write_project

ROWS_DEFAULT = 1_000_000
BATCHES = 5
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


def make_data(spark, rows: int, step: int) -> None:
    now = "unix_millis(current_timestamp())"
    spark.sql("create schema if not exists bench")
    spark.sql(
        f"""create table bench.base using parquet as
        select id, 1 as clicks, {now} - (id % {AGE_DAYS}) * {DAY_MS} - 1000 as first_ms,
               {now} - (id % {AGE_DAYS}) * {DAY_MS} as last_ms, 0L as v
        from range({rows})"""
    )
    for batch in range(1, BATCHES + 1):
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
    parser.add_argument("--keep", action="store_true", help="keep the temporary project")
    args = parser.parse_args()
    step = 100

    work = Path(tempfile.mkdtemp(prefix="jammi-bench-"))
    project = work / "project"
    (project / "models").mkdir(parents=True)
    write_project(project, "bench", work / "spark")
    models = (("plain", PLAIN), ("counters", COUNTERS), ("ttl", TTL), ("changelog", CHANGELOG))
    for name, sql in models:
        (project / "models" / f"{name}.sql").write_text(sql.format(fmt=args.format))
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

    def apply(model: str, source: str, ttl_days: int = AGE_DAYS + 10):
        variables = json.dumps({"source": source, "ttl_ms": ttl_days * DAY_MS})
        return dbt_run(project, "run", "-s", model, "--vars", variables)

    try:
        dbt(project, "debug")
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        make_data(spark, args.rows, step)
        changed = spark.sql("select count(*) from bench.changes_1").collect()[0][0]

        runs: dict[str, list] = {"plain": [], "counters": [], "ttl": [], "changelog": []}
        for model in runs:
            apply(model, "bench.base")
        for batch in range(1, BATCHES + 1):
            runs["plain"].append(apply("plain", f"bench.changes_{batch}"))
            runs["counters"].append(apply("counters", f"bench.increments_{batch}"))
            # one day older per batch: the rows last seen AGE_DAYS - batch days ago expire
            runs["ttl"].append(apply("ttl", f"bench.changes_{batch}", AGE_DAYS - batch))
            runs["changelog"].append(apply("changelog", f"bench.changes_{batch}"))

        clicks = spark.sql("select sum(clicks) from bench.counters").collect()[0][0]
        expected_clicks = args.rows + BATCHES * 3 * changed
        if clicks != expected_clicks:
            raise SystemExit(f"counters: {clicks} clicks, expected {expected_clicks}")
        kept = spark.sql("select count(*) from bench.ttl").collect()[0][0]
        expected_kept = spark.sql(
            f"""select count(*) from bench.base
                where id % {AGE_DAYS} < {AGE_DAYS - BATCHES} or id % {step} = 0"""
        ).collect()[0][0]
        if kept != expected_kept:
            raise SystemExit(f"ttl: {kept} rows kept, expected {expected_kept}")

        backing = spark.sql(
            "select backing_table from bench.topics where relation_name = 'changelog'"
        ).collect()[0][0]
        published = spark.sql(
            f"select _offset, count(*), count_if(change_kind = 'update') from bench.{backing} "
            "group by _offset order by _offset"
        ).collect()
        expected_published = [(1, args.rows, 0)] + [
            (offset, changed, changed) for offset in range(2, BATCHES + 2)
        ]
        if [tuple(r) for r in published] != expected_published:
            raise SystemExit(f"changelog: published {published}, expected {expected_published}")

        median = {m: statistics.median(r.execution for r in rs) for m, rs in runs.items()}
        print(f"rows: {args.rows:,}  changed keys per batch: {changed:,}  format: {args.format}")
        for model, seconds in median.items():
            times = ", ".join(f"{r.execution:.2f}s" for r in runs[model])
            print(f"{model}: median {seconds:.2f}s ({times})")
        print(f"counters: {clicks:,} clicks as expected; ttl: {kept:,} rows kept as expected")
        print(f"counters: {statement_profile(runs['counters'][-1], 6)}")
        print(f"ttl: {statement_profile(runs['ttl'][-1], 6)}")
        print(f"changelog: {statement_profile(runs['changelog'][-1], 6)}")
        fmt = args.format
        report(
            f"merge_functions, 3 rows per changed key ({fmt})",
            args.rows,
            median["counters"],
            median["plain"],
            "<= 1.3x plain upsert",
        )
        report(
            f"ttl_ms, about 5% expired per batch ({fmt})",
            args.rows,
            median["ttl"],
            median["plain"],
            "<= 1.2x plain upsert",
        )
        report(
            f"changelog: true, 1% of keys updated per batch ({fmt})",
            args.rows,
            median["changelog"],
            median["plain"],
            "<= 1.2x plain upsert",
        )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
