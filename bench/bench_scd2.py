"""Benchmark: one `history: scd2` batch changing 1% of 1,000,000 keys.

The batch holds only the changed keys (an incremental model's output) with a later
effective time, so the run closes 1% of the open intervals and opens as many new ones.
Prints its run time against the rewrite lower bound: a plain CREATE TABLE AS SELECT copy
of the same (post-batch) table -- the least work any rewrite of that table can do.

Everything runs in one process on the embedded Spark session (one JVM), so the figures
compare materialization times, not JVM start-up. Run:
    .venv/bin/python bench/bench_scd2.py [--keys 1000000] [--format parquet]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from harness import dbt, write_project

KEYS_DEFAULT = 1_000_000

SCD2_MODEL = """
{{{{ config(materialized='mutable_table', primary_key=['item_id'], history='scd2',
            file_format='{fmt}') }}}}
select * from {{{{ var('source') }}}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=KEYS_DEFAULT)
    parser.add_argument("--format", default="parquet")
    parser.add_argument("--keep", action="store_true", help="keep the temporary project")
    args = parser.parse_args()
    step = 100  # every 100th key changes: 1%

    work = Path(tempfile.mkdtemp(prefix="jammi-bench-scd2-"))
    project = work / "project"
    (project / "models").mkdir(parents=True)
    write_project(project, "bench_scd2", work / "spark")
    (project / "models" / "item_history.sql").write_text(SCD2_MODEL.format(fmt=args.format))
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
        spark.sql(
            f"""create table bench.items_v2 using parquet as
            select id as item_id, concat('tier-', (id + 1) % 5) as price_tier,
                   concat('avail-', id % 3) as availability, cast(2000 as bigint) as valid_from
            from range({args.keys}) where id % {step} = 0"""
        )
        changed = spark.sql("select count(*) from bench.items_v2").collect()[0][0]

        _, load_exec = dbt(
            project, "run", "-s", "item_history", "--vars", json.dumps({"source": "bench.items_v1"})
        )
        batch_wall, batch_exec = dbt(
            project, "run", "-s", "item_history", "--vars", json.dumps({"source": "bench.items_v2"})
        )
        start = time.perf_counter()
        spark.sql(
            "create table bench.ctas_copy using parquet as select * from bench.item_history"
        ).collect()
        ctas = time.perf_counter() - start

        total, open_rows, closed_at_2000 = spark.sql(
            """select count(*), count_if(valid_to is null), count_if(valid_to = 2000)
               from bench.item_history"""
        ).collect()[0]
        correct = (total, open_rows, closed_at_2000) == (
            args.keys + changed,
            args.keys,
            changed,
        )

        print(f"keys: {args.keys:,}  changed keys: {changed:,}  format: {args.format}")
        print(f"initial load (scd2, {args.keys:,} open intervals): {load_exec:.2f}s")
        print(
            f"scd2 batch (close {changed:,} + open {changed:,}): {batch_exec:.2f}s "
            f"(dbt wall incl. parse {batch_wall:.2f}s)"
        )
        print(f"rewrite lower bound, CREATE TABLE AS SELECT copy: {ctas:.2f}s")
        print(f"ratio scd2 batch / CTAS copy: {batch_exec / ctas:.2f}x")
        print(
            f"history after the batch: {total:,} rows, {open_rows:,} open, "
            f"{closed_at_2000:,} closed at 2000 -> correct: {correct}"
        )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
