"""Benchmark the topic publish against a plain INSERT INTO ... SELECT.

    .venv/bin/python bench/bench_topic.py [--rows 1000000] [--repeat 3]

Builds a throwaway dbt project on the embedded Spark session (parquet) and prints:
- publish throughput of an N-row publish (dbt model execution time) as rows/s, and as
  a ratio to `INSERT INTO plain SELECT` of the same rows into a plain parquet table on
  the same session;
- the fixed overhead of one publish: a 10-row publish minus a 10-row plain insert.
Medians over --repeat runs, after one warm-up run of each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness

SMALL = 10  # rows of the publish that measures the fixed cost

ROWS_SQL = """
select cast(id % 100000 as bigint) as order_id,
       case when id % 10 = 0 then 'd' else 'u' end as op,
       cast(id % 977 as int) as amount_cents,
       concat('sku-', cast(id % 5000 as string)) as sku
from range({rows})
"""


def write_project(root: str, rows: int) -> None:
    harness.write_project(Path(root), "bench", Path(root) / ".spark")
    os.makedirs(os.path.join(root, "models"), exist_ok=True)
    for name, n in (("big_topic", rows), ("small_topic", SMALL)):
        with open(os.path.join(root, "models", f"{name}.sql"), "w") as f:
            f.write(
                "{{ config(materialized='topic', file_format='parquet') }}\n"
                + ROWS_SQL.format(rows=n)
            )


def publish(root: str, model: str) -> harness.DbtRun:
    """One publish (a dbt run of the model): times and statements."""
    return harness.dbt_run(Path(root), "run", "--select", model)


def insert_seconds(rows: int) -> float:
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    start = time.perf_counter()
    spark.sql(
        f"insert into bench.plain_{'big' if rows > SMALL else 'small'} "
        + ROWS_SQL.format(rows=rows)
    )
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="jammi-bench-topic-")
    write_project(root, args.rows)
    publish(root, "small_topic")  # starts the session, creates the topic

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    for suffix in ("big", "small"):
        spark.sql(
            f"create table bench.plain_{suffix} (order_id bigint, op string, "
            "amount_cents int, sku string) using parquet"
        )

    publish(root, "big_topic")  # warm-up (creates the topic)
    insert_seconds(args.rows)
    insert_seconds(SMALL)
    big_runs = [publish(root, "big_topic") for _ in range(args.repeat)]
    big_publish, last_big = [r.execution for r in big_runs], big_runs[-1]
    big_insert = [insert_seconds(args.rows) for _ in range(args.repeat)]
    one_runs = [publish(root, "small_topic") for _ in range(args.repeat)]
    one_publish, last_one = [r.execution for r in one_runs], one_runs[-1]
    one_insert = [insert_seconds(SMALL) for _ in range(args.repeat)]

    p_big, i_big = statistics.median(big_publish), statistics.median(big_insert)
    p_one, i_one = statistics.median(one_publish), statistics.median(one_insert)
    print(
        f"topic publish benchmark ({args.rows:,} rows, parquet, local[2], median of {args.repeat})"
    )
    print(f"  publish:      {p_big:7.2f} s  {args.rows / p_big:12,.0f} rows/s")
    print(f"  plain insert: {i_big:7.2f} s  {args.rows / i_big:12,.0f} rows/s")
    print(f"  throughput ratio publish/insert: {i_big / p_big:.2f}")
    print(f"  {SMALL}-row publish {p_one:.2f} s, {SMALL}-row insert {i_one:.2f} s")
    print(f"  fixed overhead per publish: {p_one - i_one:.2f} s")
    print(f"  publish: {harness.statement_profile(last_big, 12)}")
    print(f"  {SMALL}-row publish: {harness.statement_profile(last_one, 16)}")
    harness.report(
        "topic publish (parquet)",
        args.rows,
        p_big,
        i_big,
        "<= 1.25x INSERT (throughput >= 0.8x)",
        statements=len(last_big.statements),
    )
    harness.report(
        f"topic publish of {SMALL} rows (parquet)",
        SMALL,
        p_one,
        i_one,
        "fixed cost (ours - baseline) <= 0.5 s",
        fixed=round(p_one - i_one, 3),
        statements=len(last_one.statements),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
