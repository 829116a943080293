"""Benchmark: what the planning read of a parquet upsert could cost, by design.

A run that changes 1% of uniformly spread keys (or nothing) must find the stored rows of
the batch's keys; parquet has no index, so the planner reads the whole table. This
measures that read and the designs meant to shrink it, against a CREATE TABLE AS SELECT
copy of the table in the same process (ratios: ours / CTAS, median of three after one
warm-up, the order rotating each round), at each size given:

  all columns     today: every stored column of the batch's keys compared with the batch
  key + row hash  the stored row hash (docs/performance.md): the key and a 128-bit hash
                  (16 bytes: md5 of the value columns' JSON) compared with the batch's
  keys only       the floor of any read without an index: the key column alone
  two passes      today's rewrite without dbt: stage the changed rows (the stored rows
                  of the batch's keys found by a broadcast semi join, every column
                  compared), then write the next version (the stored rows not
                  replaced, plus the changes)
  one pass        the rewrite deciding in its own read: the batch's stored keys found by a
                  keys-only read, then every stored row joined with the broadcast batch
                  and written once, with the batch's new keys

Every case's result is checked (the counts, and each copy's rows by a checksum against
the next version expected), and the row hash of equal values must be equal. Two row
shapes: `narrow` (the rows of bench_mutable_upsert.py: ~9 bytes a row on disk)
and `wide` (the same plus a 192-character payload). Spark only: no dbt run, so no
fixed cost of a run is in these numbers. Run:
    .venv/bin/python bench/bench_planning_read.py [--rows 1000000,10000000]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

ROUNDS = 4  # the first is a warm-up
HINT = "/*+ broadcast(b) */"
CASES = ("all columns", "key + row hash", "keys only", "two passes", "one pass")
CHECKSUM = "select count(*), sum(hash(*)) from {table}"

VALUES = {
    "narrow": "concat('item-', id) as name, id % 1000 as price, "
    "concat('cat-', id % 37) as category, {ms} as updated_ms",
    "wide": "concat('item-', id) as name, id % 1000 as price, "
    "concat('cat-', id % 37) as category, {ms} as updated_ms, "
    "concat(md5(cast(id as string)), md5(cast(id + 1 as string)), md5(cast(id + 2 as string)), "
    "md5(cast(id + 3 as string)), md5(cast(id + 4 as string)), md5(cast(id + 5 as string))) "
    "as payload",
}
COLUMNS_OF = {
    "narrow": ["name", "price", "category", "updated_ms"],
    "wide": ["name", "price", "category", "updated_ms", "payload"],
}


def row_hash(columns: list[str], alias: str) -> str:
    fields = ", ".join(f"'{c}', {alias}.{c}" for c in columns)
    return f"unhex(md5(to_json(named_struct({fields}))))"


def make_tables(spark, shape: str, rows: int) -> None:
    values = VALUES[shape]
    spark.sql(
        f"create table stored using parquet as select id, {values.format(ms=1000)} "
        f"from range({rows})"
    )
    spark.sql(
        f"create table hashed using parquet as select *, "
        f"{row_hash(COLUMNS_OF[shape], 's')} as _row_hash from stored as s"
    )
    # 1% of the keys with new values, and as many new keys
    spark.sql(
        f"create table batch using parquet as select id, {values.format(ms=2000)} "
        f"from range({rows}) where id % 100 = 0 union all "
        f"select id, {values.format(ms=2000)} from range({rows}, {rows + rows // 100})"
    )


def statements(shape: str) -> dict[str, list[str]]:
    """Each case's statements; the batch is broadcast in every join (as the planner's
    semi join is)."""
    columns = COLUMNS_OF[shape]
    same = " and ".join(f"t.{c} <=> b.{c}" for c in columns)
    listed = ", ".join(["id", *columns])
    replaced = ", ".join(["t.id", *(f"if(b.id is null, t.{c}, b.{c}) as {c}" for c in columns)])
    joined = "from stored as t join batch as b on t.id = b.id"
    return {
        "CTAS": ["create table copy using parquet as select * from stored"],
        "all columns": [f"select {HINT} count(*) {joined} where {same}"],
        "key + row hash": [
            f"select {HINT} count(*) {joined.replace('stored', 'hashed')} "
            f"where t._row_hash = {row_hash(columns, 'b')}"
        ],
        "keys only": [
            f"select {HINT} count(*) from stored as t left semi join batch as b on t.id = b.id"
        ],
        "two passes": [
            f"create table change_set using parquet as with target as (select {HINT} t.* "
            "from stored as t left semi join batch as b on t.id = b.id) "
            "select b.* from batch as b left join target as t on t.id = b.id "
            f"where t.id is null or not ({same})",
            f"create table copy using parquet as select {listed} from stored as t "
            "left anti join change_set as c on t.id = c.id "
            f"union all select {listed} from change_set",
        ],
        "one pass": [
            f"create table change_set using parquet as select {HINT} t.id from stored as t "
            "left semi join batch as b on t.id = b.id",
            f"create table copy using parquet as select {HINT} {replaced} from stored as t "
            "left join batch as b on t.id = b.id union all "
            f"select /*+ broadcast(c) */ {listed} from batch as b "
            "left anti join change_set as c on b.id = c.id",
        ],
    }


def timed(spark, sqls: list[str]) -> tuple[float, list]:
    """Seconds of the statements, and the last one's rows (the copy's checksum for the
    cases that write one), the tables they wrote dropped."""
    start = time.perf_counter()
    for sql in sqls:
        rows = spark.sql(sql).collect()
    seconds = time.perf_counter() - start
    if spark.catalog.tableExists("copy"):
        rows = spark.sql(CHECKSUM.format(table="copy")).collect()
    spark.sql("drop table if exists copy")
    spark.sql("drop table if exists change_set")
    return seconds, [tuple(r) for r in rows]


def expected_results(spark, shape: str, rows: int) -> dict[str, list]:
    """What each case must return: no batch row repeats its stored values, 1% of the
    stored keys are in the batch, and both rewrites give the stored rows the batch does
    not replace plus the batch (the table the CTAS copies is the input, as it is)."""
    spark.sql(
        "create table copy using parquet as select s.* from stored as s left anti join "
        "batch as b on s.id = b.id union all select * from batch"
    )
    next_version = [tuple(r) for r in spark.sql(CHECKSUM.format(table="copy")).collect()]
    spark.sql("drop table copy")
    stored = [tuple(r) for r in spark.sql(CHECKSUM.format(table="stored")).collect()]
    hashed = spark.sql(
        "select count(*) from hashed as h join stored as s on h.id = s.id "
        f"where h._row_hash = {row_hash(COLUMNS_OF[shape], 's')}"
    ).collect()[0][0]
    if hashed != rows:
        raise SystemExit(f"the row hash of equal values differs in {rows - hashed} rows")
    return {
        "CTAS": stored,
        "all columns": [(0,)],
        "key + row hash": [(0,)],
        "keys only": [(rows // 100,)],
        "two passes": next_version,
        "one pass": next_version,
    }


def directory_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*.parquet")) / 1e6


def measure(spark, warehouse: Path, shape: str, rows: int, only: list[str]) -> None:
    for table in ("stored", "hashed", "batch"):
        spark.sql(f"drop table if exists {table}")
    make_tables(spark, shape, rows)
    cases = {n: sqls for n, sqls in statements(shape).items() if n == "CTAS" or n in only}
    times: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    expected = expected_results(spark, shape, rows)
    for round_ in range(ROUNDS):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            seconds, result = timed(spark, cases[name])
            if result != expected[name]:
                raise SystemExit(f"{shape}, {name}: {result} where {expected[name]} was due")
            times[name].append(seconds)
    medians = {name: statistics.median(t[1:]) for name, t in times.items()}
    ctas = medians["CTAS"]
    stored_mb = directory_mb(warehouse / "stored")
    hash_mb = directory_mb(warehouse / "hashed") - stored_mb
    print(
        f"\n{shape} rows, {rows:,} stored, 1% changed + 1% new; on disk: table "
        f"{stored_mb:.0f} MB, its row hashes {hash_mb:.0f} MB"
    )
    for name, median in medians.items():
        runs = " ".join(f"{t:.2f}" for t in times[name][1:])
        print(f"  {name:15s} {median:6.2f} s  {median / ctas:5.2f}x CTAS   ({runs})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000")
    parser.add_argument("--shapes", default="narrow,wide")
    parser.add_argument("--cases", default=",".join(CASES), help="CTAS always runs")
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    warehouse = Path(tempfile.mkdtemp(prefix="jammi-planning-read-"))
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        for rows in (int(r) for r in args.rows.split(",")):
            for shape in args.shapes.split(","):
                measure(spark, warehouse, shape, rows, args.cases.split(","))
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)


if __name__ == "__main__":
    main()
