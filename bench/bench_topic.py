"""Benchmark the topic publish against a plain INSERT INTO ... SELECT.

    .venv/bin/python bench/bench_topic.py [--rows 1000000] [--repeat 3]

Builds a throwaway dbt project on the embedded Spark session (parquet) and prints:
- publish throughput of an N-row publish (dbt model execution time) as rows/s, and as
  a ratio to `INSERT INTO plain SELECT` of the same rows into a plain parquet table on
  the same session;
- the fixed overhead of one publish: a 1-row publish minus a 1-row plain insert.
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
    for name, n in (("big_topic", rows), ("one_row_topic", 1)):
        with open(os.path.join(root, "models", f"{name}.sql"), "w") as f:
            f.write(
                "{{ config(materialized='topic', file_format='parquet') }}\n"
                + ROWS_SQL.format(rows=n)
            )


def publish_seconds(root: str, model: str) -> float:
    """The model's execution time of one publish."""
    return harness.dbt(Path(root), "run", "--select", model)[1]


def insert_seconds(rows: int) -> float:
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    start = time.perf_counter()
    spark.sql(
        f"insert into bench.plain_{'big' if rows > 1 else 'one'} " + ROWS_SQL.format(rows=rows)
    )
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="jammi-bench-topic-")
    write_project(root, args.rows)
    publish_seconds(root, "one_row_topic")  # starts the session, creates the topic

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    for suffix in ("big", "one"):
        spark.sql(
            f"create table bench.plain_{suffix} (order_id bigint, op string, "
            "amount_cents int, sku string) using parquet"
        )

    publish_seconds(root, "big_topic")  # warm-up (creates the topic)
    insert_seconds(args.rows)
    insert_seconds(1)
    big_publish = [publish_seconds(root, "big_topic") for _ in range(args.repeat)]
    big_insert = [insert_seconds(args.rows) for _ in range(args.repeat)]
    one_publish = [publish_seconds(root, "one_row_topic") for _ in range(args.repeat)]
    one_insert = [insert_seconds(1) for _ in range(args.repeat)]

    p_big, i_big = statistics.median(big_publish), statistics.median(big_insert)
    p_one, i_one = statistics.median(one_publish), statistics.median(one_insert)
    print(
        f"topic publish benchmark ({args.rows:,} rows, parquet, local[2], median of {args.repeat})"
    )
    print(f"  publish:      {p_big:7.2f} s  {args.rows / p_big:12,.0f} rows/s")
    print(f"  plain insert: {i_big:7.2f} s  {args.rows / i_big:12,.0f} rows/s")
    print(f"  throughput ratio publish/insert: {i_big / p_big:.2f}")
    print(f"  1-row publish {p_one:.2f} s, 1-row insert {i_one:.2f} s")
    print(f"  fixed overhead per publish: {p_one - i_one:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
