"""Benchmark: upsert 1% changed keys into an N-row mutable_table (default 1,000,000).

The table is loaded once, then three batches each change the same 1% of keys (new
values every time); their median run time is compared, in the same process (one JVM),
with two baselines that produce the same table contents:
  (a) a plain CREATE TABLE AS SELECT copy of the table: the floor for rewriting it (one
      read and one write), median of three;
  (b) rebuilding the same result with a dbt `table` model (previous state anti-joined
      with the changes, plus the changes).
A fourth run repeats the last batch: nothing changes, so nothing may be rewritten.
Prints the statements the upsert sent, slowest first. Run:
    .venv/bin/python bench/bench_mutable_upsert.py [--rows 1000000] [--format parquet]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from harness import dbt, dbt_run, fixed_cost, report, statement_profile, write_project

ROWS_DEFAULT = 1_000_000
BATCHES = 3

UPSERT_MODEL = """
{{{{ config(materialized='mutable_table', primary_key=['id'], file_format='{fmt}') }}}}
select * from {{{{ var('source') }}}}
"""

REBUILD_MODEL = """
{{{{ config(materialized='table', file_format='parquet') }}}}
select b.* from bench.base as b left anti join bench.changes_{last} as c on b.id = c.id
union all
select * from bench.changes_{last}
"""


def spark_timed(spark, sql: str) -> float:
    start = time.perf_counter()
    spark.sql(sql).collect()
    return time.perf_counter() - start


def make_data(spark, rows: int, step: int) -> None:
    spark.sql("create schema if not exists bench")
    spark.sql(
        f"""create table bench.base using parquet as
        select id, concat('item-', id) as name, id % 1000 as price,
               concat('cat-', id % 37) as category, 1000 as updated_ms
        from range({rows})"""
    )
    for batch in range(1, BATCHES + 1):
        spark.sql(
            f"""create table bench.changes_{batch} using parquet as
            select id, concat('item-', id, '-v{batch + 1}') as name, id % 1000 + {batch} as price,
                   concat('cat-', id % 37) as category, {1000 + batch * 1000} as updated_ms
            from range({rows}) where id % {step} = 0"""
        )


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
    (project / "models" / "bench_fixed.sql").write_text(UPSERT_MODEL.format(fmt=args.format))
    (project / "models" / "bench_rebuild.sql").write_text(REBUILD_MODEL.format(last=BATCHES))
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

    def upsert(source: str):
        variables = json.dumps({"source": source})
        return dbt_run(project, "run", "-s", "bench_upsert", "--vars", variables)

    try:
        # dbt opens the embedded session; the data is generated on that same session
        dbt(project, "debug")
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        make_data(spark, args.rows, args.rows // changed)
        n_changes = spark.sql("select count(*) from bench.changes_1").collect()[0][0]

        load = upsert("bench.base")
        runs = [upsert(f"bench.changes_{batch}") for batch in range(1, BATCHES + 1)]
        no_op = upsert(f"bench.changes_{BATCHES}")
        copies = [
            spark_timed(
                spark,
                f"create table bench.copy_{i} using parquet as select * from bench.bench_upsert",
            )
            for i in range(BATCHES)
        ]
        rebuild_wall, rebuild_exec = dbt(project, "run", "-s", "bench_rebuild")
        # the same model on 10 rows, batches of one changed key: what any run costs
        tiny = ["(select * from bench.base where id < 10)"]
        tiny += [f"(select * from bench.changes_{b} where id = 0)" for b in range(1, BATCHES + 1)]
        fixed = fixed_cost(project, "bench_fixed", tiny)
        # and of a run that changes nothing (it writes and commits nothing)
        fixed_no_op = fixed_cost(project, "bench_fixed", [tiny[-1]] * (BATCHES + 1))

        same = spark.sql(
            """select count(*) from (
                 (select id, name, price, category, updated_ms from bench.bench_upsert
                  except all select * from bench.bench_rebuild)
                 union all
                 (select * from bench.bench_rebuild
                  except all select id, name, price, category, updated_ms
                  from bench.bench_upsert))"""
        ).collect()[0][0]
        if same != 0:
            raise SystemExit(f"mutable_table result differs from the rebuild in {same} rows")

        ours = statistics.median([r.execution for r in runs])
        ctas = statistics.median(copies)
        print(f"rows: {args.rows:,}  changed keys: {n_changes:,}  format: {args.format}")
        print(f"initial load (mutable_table, {args.rows:,} inserts): {load.execution:.2f}s")
        print(f"mutable_table upsert, median of {BATCHES}: {ours:.2f}s")
        print(f"  runs: {', '.join(f'{r.execution:.2f}s' for r in runs)}")
        print(f"batch that changes nothing: {no_op.execution:.2f}s")
        print(f"(a) CREATE TABLE AS SELECT copy, median of {BATCHES}: {ctas:.2f}s")
        print(f"(b) dbt table model rebuild: {rebuild_exec:.2f}s (wall {rebuild_wall:.2f}s)")
        print(f"ratio upsert / CTAS copy: {ours / ctas:.2f}x")
        print(f"fixed cost of a run (10 rows, median of {BATCHES}): {fixed:.2f}s")
        print(f"ratio (upsert - fixed) / CTAS copy: {(ours - fixed) / ctas:.2f}x")
        print(f"fixed cost of a run that changes nothing (10 rows): {fixed_no_op:.2f}s")
        print(f"ratio upsert / dbt table rebuild: {ours / rebuild_exec:.2f}x")
        print("results identical to the rebuild: True")
        print(f"upsert: {statement_profile(runs[-1], 30)}")
        print(f"no-op batch: {statement_profile(no_op, 5)}")
        fmt = args.format
        report(
            f"mutable_table upsert 1% ({fmt})",
            args.rows,
            ours,
            ctas,
            "<= 1.5x CTAS (at 10M)",
            statements=len(runs[-1].statements),
            fixed=round(fixed, 3),
        )
        report(
            f"mutable_table no-op batch ({fmt})",
            args.rows,
            no_op.execution,
            ctas,
            "<= 0.3x CTAS (at 10M)",
            statements=len(no_op.statements),
            fixed=round(fixed_no_op, 3),
        )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
