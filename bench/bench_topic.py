"""Benchmark the topic publish against a plain INSERT INTO ... SELECT.

    .venv/bin/python bench/bench_topic.py [--rows 1000000] [--repeat 3]

Builds a throwaway dbt project on the embedded Spark session (parquet) and prints:
- publish throughput of an N-row publish (dbt model execution time) as rows/s, and as
  a ratio to `INSERT INTO plain SELECT` of the same rows into a plain parquet table on
  the same session, for a topic with `row_idx: contiguous` (the default) and one with
  `row_idx: ordered`;
- the fixed overhead of one publish: a 10-row publish minus a 10-row plain insert.
Medians over --repeat rounds, after one warm-up run of each; within a round the sides
run in an order that rotates from round to round.
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
    for name, n, row_idx in (
        ("big_topic", rows, "contiguous"),
        ("small_topic", SMALL, "contiguous"),
        ("big_ordered", rows, "ordered"),
        ("small_ordered", SMALL, "ordered"),
    ):
        with open(os.path.join(root, "models", f"{name}.sql"), "w") as f:
            config = f"materialized='topic', file_format='parquet', row_idx='{row_idx}'"
            f.write(f"{{{{ config({config}) }}}}\n" + ROWS_SQL.format(rows=n))


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


def rounds(sides: dict, repeat: int) -> dict:
    """Each side's times over ``repeat`` rounds, the order rotating each round. A side
    returns seconds, or a DbtRun (its models' execution seconds; the last run kept)."""
    names = list(sides)
    times: dict = {name: [] for name in names}
    last: dict = {}
    for round_number in range(repeat):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            result = sides[name]()
            if isinstance(result, harness.DbtRun):
                last[name] = result
                result = result.execution
            times[name].append(result)
    return {name: (statistics.median(times[name]), last.get(name)) for name in names}


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
    for model in ("big_topic", "big_ordered", "small_ordered"):
        publish(root, model)  # warm-up (creates the topic)
    insert_seconds(args.rows)
    insert_seconds(SMALL)

    big = rounds(
        {
            "contiguous": lambda: publish(root, "big_topic"),
            "ordered": lambda: publish(root, "big_ordered"),
            "insert": lambda: insert_seconds(args.rows),
        },
        args.repeat,
    )
    small = rounds(
        {
            "contiguous": lambda: publish(root, "small_topic"),
            "ordered": lambda: publish(root, "small_ordered"),
            "insert": lambda: insert_seconds(SMALL),
        },
        args.repeat,
    )
    i_big, i_one = big["insert"][0], small["insert"][0]
    print(
        f"topic publish benchmark ({args.rows:,} rows, parquet, local[2], median of {args.repeat})"
    )
    print(f"  plain insert: {i_big:7.2f} s  {args.rows / i_big:12,.0f} rows/s")
    for form in ("contiguous", "ordered"):
        p_big, last_big = big[form]
        p_one, last_one = small[form]
        print(f"  publish, row_idx {form}: {p_big:7.2f} s  {args.rows / p_big:12,.0f} rows/s")
        print(f"    throughput ratio publish/insert: {i_big / p_big:.2f}")
        print(f"    {SMALL}-row publish {p_one:.2f} s, {SMALL}-row insert {i_one:.2f} s")
        print(f"    fixed overhead per publish: {p_one - i_one:.2f} s")
        print(f"    publish: {harness.statement_profile(last_big, 12)}")
        print(f"    {SMALL}-row publish: {harness.statement_profile(last_one, 16)}")
        suffix = "" if form == "contiguous" else ", row_idx ordered"
        harness.report(
            f"topic publish (parquet{suffix})",
            args.rows,
            p_big,
            i_big,
            "<= 1.25x INSERT (throughput >= 0.8x)",
            statements=len(last_big.statements),
        )
        harness.report(
            f"topic publish of {SMALL} rows (parquet{suffix})",
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
