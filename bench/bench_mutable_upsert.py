"""Benchmark: upsert 1% changed keys into a 1,000,000-row mutable_table.

Prints the run time of the mutable_table upsert against two baselines that produce the
same table contents:
  (a) a plain CREATE TABLE AS SELECT copy of the table (the floor for rewriting it), and
  (b) rebuilding the same result with a dbt `table` model (previous state anti-joined
      with the changes, plus the changes).

Everything runs in one process on the embedded Spark session (one JVM), so the dbt
figures compare materialization times, not JVM start-up. Run:
    .venv/bin/python bench/bench_mutable_upsert.py [--rows 1000000] [--format parquet]
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

ROWS_DEFAULT = 1_000_000

UPSERT_MODEL = """
{{{{ config(materialized='mutable_table', primary_key=['id'], file_format='{fmt}') }}}}
select * from {{{{ var('source') }}}}
"""

REBUILD_MODEL = """
{{ config(materialized='table', file_format='parquet') }}
select b.* from bench.base as b left anti join bench.changes as c on b.id = c.id
union all
select * from bench.changes
"""


def spark_timed(spark, sql: str) -> float:
    start = time.perf_counter()
    spark.sql(sql).collect()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=ROWS_DEFAULT)
    parser.add_argument("--format", default="parquet")
    parser.add_argument("--keep", action="store_true", help="keep the temporary project")
    args = parser.parse_args()
    changed = max(1, args.rows // 100)

    work = Path(tempfile.mkdtemp(prefix="jammi-bench-"))
    project = work / "project"
    (project / "models").mkdir(parents=True)
    write_project(project, "bench", work / "spark")
    (project / "models" / "bench_upsert.sql").write_text(UPSERT_MODEL.format(fmt=args.format))
    (project / "models" / "bench_rebuild.sql").write_text(REBUILD_MODEL)
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

    try:
        # dbt opens the embedded session; the data is generated on that same session
        dbt(project, "debug")
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        spark.sql("create schema if not exists bench")
        spark.sql(
            f"""create table bench.base using parquet as
            select id, concat('item-', id) as name, id % 1000 as price,
                   concat('cat-', id % 37) as category, 1000 as updated_ms
            from range({args.rows})"""
        )
        spark.sql(
            f"""create table bench.changes using parquet as
            select id, concat('item-', id, '-v2') as name, id % 1000 + 1 as price,
                   concat('cat-', id % 37) as category, 2000 as updated_ms
            from range({args.rows}) where id % {args.rows // changed} = 0"""
        )
        n_changes = spark.sql("select count(*) from bench.changes").collect()[0][0]

        load_wall, load_exec = dbt(
            project, "run", "-s", "bench_upsert", "--vars", json.dumps({"source": "bench.base"})
        )
        upsert_wall, upsert_exec = dbt(
            project,
            "run",
            "-s",
            "bench_upsert",
            "--vars",
            json.dumps({"source": "bench.changes"}),
        )
        ctas = spark_timed(
            spark, "create table bench.ctas_copy using parquet as select * from bench.bench_upsert"
        )
        rebuild_wall, rebuild_exec = dbt(project, "run", "-s", "bench_rebuild")

        same = spark.sql(
            """select count(*) from (
                 (select id, name, price, category, updated_ms from bench.bench_upsert
                  except all select * from bench.bench_rebuild)
                 union all
                 (select * from bench.bench_rebuild
                  except all select id, name, price, category, updated_ms
                  from bench.bench_upsert))"""
        ).collect()[0][0]

        print(f"rows: {args.rows:,}  changed keys: {n_changes:,}  format: {args.format}")
        print(f"initial load (mutable_table, {args.rows:,} inserts): {load_exec:.2f}s")
        print(f"mutable_table upsert: {upsert_exec:.2f}s (dbt wall incl. parse {upsert_wall:.2f}s)")
        print(f"(a) CREATE TABLE AS SELECT copy: {ctas:.2f}s")
        print(f"(b) dbt table model rebuild: {rebuild_exec:.2f}s (wall {rebuild_wall:.2f}s)")
        print(f"ratio upsert / CTAS copy: {upsert_exec / ctas:.2f}x")
        print(f"ratio upsert / dbt table rebuild: {upsert_exec / rebuild_exec:.2f}x")
        print(f"results identical: {same == 0}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
