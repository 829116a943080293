"""Benchmark on a Delta session: upsert 1% changed keys into an N-row mutable_table.

Against two baselines doing the same change on a Delta table of the same data, in the
same process (one JVM):
  (a) dbt-spark's peer: an `incremental` model, `incremental_strategy: merge`,
      `unique_key: id`, `file_format: delta` -- one plain MERGE;
  (b) a Delta `create table ... as select` copy of the table (rewriting all of it).
Ours runs with the mutable_table's checks (duplicate keys in the batch, version rules,
tenant scope) in its MERGE. Prints seconds and ratios (ours / baseline) per size.

`--layouts plain,dv` measures each size twice: as created, and with deletion vectors
(`delta.enableDeletionVectors`) switched on for both tables before the timed run (the
MERGE then marks replaced rows in a vector instead of rewriting their files).

Delta's jars: JAMMI_DELTA_JARS (comma-separated or a directory), else
../shared/jars/delta beside the repository. Run:
    .venv/bin/python bench/bench_delta_merge.py [--rows 1000000,10000000] [--layouts plain,dv]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from harness import dbt, report, write_project

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from delta_lane import local_jars  # noqa: E402

OURS = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='delta',
          alias='ours_' ~ var('suffix')) }}
select * from {{ var('source') }}
"""

PEER = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',
          file_format='delta', alias='peer_' ~ var('suffix')) }}
select * from {{ var('source') }}
"""


def timed(spark, sql: str) -> float:
    start = time.perf_counter()
    spark.sql(sql).collect()
    return time.perf_counter() - start


DELETION_VECTORS = "set tblproperties ('delta.enableDeletionVectors' = 'true')"


def measure(project: Path, spark, rows: int, layout: str) -> dict[str, float]:
    suffix = f"{rows}_{layout}"
    base, changes = f"bench.base_{suffix}", f"bench.changes_{suffix}"
    spark.sql(
        f"""create table {base} using delta as
        select id, concat('item-', id) as name, id % 1000 as price,
               concat('cat-', id % 37) as category, 1000 as updated_ms from range({rows})"""
    )
    spark.sql(
        f"""create table {changes} using delta as
        select id, concat('item-', id, '-v2') as name, id % 1000 + 1 as price,
               concat('cat-', id % 37) as category, 2000 as updated_ms
        from range({rows}) where id % 100 = 0"""
    )
    times = {}
    for model in ("ours", "peer"):
        run = ["run", "-s", model, "--vars"]
        dbt(project, *run, json.dumps({"source": base, "suffix": suffix}))
        if layout == "dv":
            spark.sql(f"alter table bench.{model}_{suffix} {DELETION_VECTORS}")
        _, times[model] = dbt(project, *run, json.dumps({"source": changes, "suffix": suffix}))
    times["ctas"] = timed(
        spark, f"create table bench.copy_{suffix} using delta as select * from bench.ours_{suffix}"
    )
    differ = spark.sql(
        f"""select count(*) from (
          (select id, name, price, category, updated_ms from bench.ours_{suffix}
           except all select id, name, price, category, updated_ms from bench.peer_{suffix})
          union all
          (select id, name, price, category, updated_ms from bench.peer_{suffix}
           except all select id, name, price, category, updated_ms from bench.ours_{suffix}))"""
    ).collect()[0][0]
    times["identical"] = float(differ == 0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000", help="comma-separated sizes")
    parser.add_argument("--layouts", default="plain", help="plain and/or dv, comma-separated")
    parser.add_argument("--keep", action="store_true", help="keep the temporary project")
    args = parser.parse_args()
    unknown = set(args.layouts.split(",")) - {"plain", "dv"}
    if unknown:
        raise SystemExit(f"--layouts takes plain and dv, not {', '.join(sorted(unknown))}")
    jars = local_jars(os.environ.get("JAMMI_DELTA_JARS"))
    if not jars:
        raise SystemExit("no Delta jars: set JAMMI_DELTA_JARS (or put them in ../shared)")

    work = Path(tempfile.mkdtemp(prefix="jammi-bench-delta-"))
    project = work / "project"
    (project / "models").mkdir(parents=True)
    write_project(
        project,
        "bench",
        work / "spark",
        {
            "spark.jars": jars,
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        },
    )
    (project / "models" / "ours.sql").write_text(OURS)
    (project / "models" / "peer.sql").write_text(PEER)
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    try:
        dbt(project, "debug")
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        spark.sql("create schema if not exists bench")
        print(
            "| rows | layout | changed keys | mutable_table upsert | (a) dbt-spark merge "
            "| (b) Delta CTAS copy | ours / (a) | ours / (b) | same rows |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for rows in (int(r) for r in args.rows.split(",")):
            for layout in args.layouts.split(","):
                t = measure(project, spark, rows, layout)
                print(
                    f"| {rows:,} | {layout} | {rows // 100:,} | {t['ours']:.2f} s | "
                    f"{t['peer']:.2f} s | "
                    f"{t['ctas']:.2f} s | {t['ours'] / t['peer']:.2f}x | "
                    f"{t['ours'] / t['ctas']:.2f}x | {bool(t['identical'])} |",
                    flush=True,
                )
                report(
                    f"mutable_table upsert 1% (delta, {layout}) vs dbt-spark merge",
                    rows,
                    t["ours"],
                    t["peer"],
                    "<= 1.0x dbt-spark merge",
                )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
