"""Benchmark on a Delta or Iceberg session: a mutable_table against dbt-spark's own merge.

Both sides apply the same batch to a table of the same N rows and format, in the same
process (one JVM): ours is a `mutable_table` (primary key `id`, with its checks:
NULL and duplicate keys, tenant scope, no-op updates left alone); the peer is
dbt-spark's `incremental` model with `incremental_strategy: merge`, `unique_key: id`
(one plain MERGE that updates every matched row). Four batch shapes by default:

  1pct         1% of the keys change (new values each round)
  100keys      100 keys spread over the table change
  half_repeat  1% of the keys are in the batch; half of them repeat the stored values
               (snapshot and CDC feeds do this: dbt-spark rewrites those rows)
  snapshot     the whole table re-sent, 1% of the keys with new values (a snapshot
               feed: dbt-spark's merge updates every row, so every file); the
               mutable_table declares it with `hard_deletes: delete` (its batch is the
               complete set; no key is absent here, so both tables stay equal)
  all          every key changes (not by default; --rows 10 --shapes all measures the
               fixed cost of a run: a 10-row batch into a 10-row table)
  noop         1% of the keys, every row repeating the stored values (not by default)

Each shape has its own pair of tables, built from the same N rows. Each of four rounds
writes a fresh batch table, reads it once (so neither side pays for the first read of
new files), then runs the pair, alternating which side goes first (the second run of a
pair is often faster, whichever side it is; with four rounds each side goes first
twice). The figure is the median of the four rounds of each side (dbt's execution
time of the model). After the rounds both tables must hold the same rows, or the
benchmark fails.

`--format delta` (the default): `--layouts plain,dv` measures each shape twice, as
created and with deletion vectors (`delta.enableDeletionVectors`) switched on for both
tables before the rounds. `--format iceberg`: `--layouts cow,mor`, copy-on-write (as
created) and merge-on-read (`write.merge.mode`, `write.update.mode`,
`write.delete.mode` set to `merge-on-read` on both tables), on Iceberg's
SparkSessionCatalog over the embedded Hive metastore.

Jars: JAMMI_DELTA_JARS / JAMMI_ICEBERG_JARS (comma-separated or a directory), else the
.jars/ cache `make jars` fills. Run:
    .venv/bin/python bench/bench_merge_peer.py [--format delta|iceberg]
        [--rows 1000000,10000000] [--layouts plain,dv | cow,mor]
        [--shapes 1pct,100keys,half_repeat,snapshot] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from delta_lane import local_jars  # noqa: E402
from iceberg_probe import ICEBERG_CONFS, SINGLE_WRITER_CONFS  # noqa: E402
from spark_thrift_server import server_format_jars  # noqa: E402

OURS = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format=var('format'),
          hard_deletes=var('hard_deletes', 'ignore'), alias='ours_' ~ var('suffix')) }}
select * from {{ var('source') }}
"""

PEER = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',
          file_format=var('format'), alias='peer_' ~ var('suffix')) }}
select * from {{ var('source') }}
"""

ROUNDS = 4
COLUMNS = "id, name, price, category, updated_ms"
BASE_ROW = "concat('item-', id) as name, id % 1000 as price, concat('cat-', id % 37) as category"


def changed_row(round_no: int) -> str:
    return (
        f"concat('item-', id, '-v{round_no}') as name, id % 1000 + {round_no} as price, "
        f"concat('cat-', id % 37) as category, {1000 + round_no} as updated_ms"
    )


def batch_sql(shape: str, rows: int, round_no: int) -> str:
    """The batch of one round: the keys of `shape`, with new values for round_no."""
    if shape == "1pct":
        return f"select id, {changed_row(round_no)} from range({rows}) where id % 100 = 0"
    if shape == "noop":
        return f"select id, {BASE_ROW}, 1000 as updated_ms from range({rows}) where id % 100 = 0"
    if shape == "snapshot":
        return f"""select id,
            if(id % 100 = 0, concat('item-', id, '-v{round_no}'), concat('item-', id)) as name,
            id % 1000 + if(id % 100 = 0, {round_no}, 0) as price,
            concat('cat-', id % 37) as category,
            if(id % 100 = 0, {1000 + round_no}, 1000) as updated_ms
            from range({rows})"""
    if shape == "all":
        return f"select id, {changed_row(round_no)} from range({rows})"
    if shape == "100keys":
        return f"select id, {changed_row(round_no)} from range({rows}) where id % {rows // 100} = 0"
    # half_repeat: keys with id % 200 = 100 repeat their stored (base) values every round
    return f"""select id, {changed_row(round_no)} from range({rows}) where id % 200 = 0
        union all
        select id, {BASE_ROW}, 1000 as updated_ms from range({rows}) where id % 200 = 100"""


SHAPE_GOAL = {
    "1pct": "<= 1.0x",
    "100keys": "<= 1.0x",
    "half_repeat": "<= 1.0x",
    "snapshot": "<= 0.8x (dv: <= 0.5x)",
    "all": "<= 1.5x",
    "noop": "writes nothing",
}
DEFAULT_SHAPES = "1pct,100keys,half_repeat,snapshot"
# What a layout switches on for both tables before the rounds (none: as created).
LAYOUTS = {
    "delta": {"plain": None, "dv": "set tblproperties ('delta.enableDeletionVectors' = 'true')"},
    "iceberg": {
        "cow": None,
        "mor": "set tblproperties ('write.merge.mode' = 'merge-on-read', "
        "'write.update.mode' = 'merge-on-read', 'write.delete.mode' = 'merge-on-read')",
    },
}


def session_settings(file_format: str) -> dict[str, str]:
    """The embedded session's settings for ``file_format``: its jars and catalog."""
    if file_format == "iceberg":
        jars = server_format_jars("iceberg")  # JAMMI_ICEBERG_JARS, else .jars/
        if not jars:
            raise SystemExit("no Iceberg jars: set JAMMI_ICEBERG_JARS (or run `make jars`)")
        return {"spark.jars": jars, **ICEBERG_CONFS, **SINGLE_WRITER_CONFS}  # one writer
    jars = local_jars(os.environ.get("JAMMI_DELTA_JARS"))
    if not jars:
        raise SystemExit("no Delta jars: set JAMMI_DELTA_JARS (or run `make jars`)")
    return {
        "spark.jars": jars,
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    }


def measure(project: Path, spark, rows: int, layout: str, shape: str, args) -> tuple:
    suffix = f"{rows}_{layout}_{shape}"
    base = f"bench.base_{rows}"
    fmt = args.format
    if not spark.catalog.tableExists(base):
        spark.sql(
            f"create table {base} using {fmt} as "
            f"select id, {BASE_ROW}, 1000 as updated_ms from range({rows})"
        )
    hard_deletes = "delete" if shape == "snapshot" else "ignore"
    for model in ("ours", "peer"):
        variables = {"source": base, "suffix": suffix, "format": fmt, "hard_deletes": hard_deletes}
        dbt(project, "run", "-s", model, "--vars", json.dumps(variables))
        if LAYOUTS[fmt][layout]:
            spark.sql(f"alter table bench.{model}_{suffix} {LAYOUTS[fmt][layout]}")
    times: dict[str, list[float]] = {"ours": [], "peer": []}
    last, plans = {}, {}
    for round_no in range(1, ROUNDS + 1):
        batch = f"bench.batch_{suffix}_{round_no}"
        spark.sql(f"create table {batch} using {fmt} as {batch_sql(shape, rows, round_no)}")
        spark.sql(f"select count(*), sum(hash({COLUMNS})) from {batch}").collect()
        order = ("ours", "peer") if round_no % 2 else ("peer", "ours")
        for model in order:
            variables = json.dumps(
                {"source": batch, "suffix": suffix, "format": fmt, "hard_deletes": hard_deletes}
            )
            seen = {e["id"] for e in spark_ui_executions(spark)} if args.plans else set()
            run = dbt_run(project, "run", "-s", model, "--vars", variables)
            times[model].append(run.execution)
            if args.plans:
                executions = [e for e in spark_ui_executions(spark) if e["id"] not in seen]
                plans[model] = plan_summary(spark, executions, f"{model}_{suffix}")
            last[model] = run
    differ = spark.sql(
        f"""select count(*) from (
          (select {COLUMNS} from bench.ours_{suffix} except all
           select {COLUMNS} from bench.peer_{suffix})
          union all
          (select {COLUMNS} from bench.peer_{suffix} except all
           select {COLUMNS} from bench.ours_{suffix}))"""
    ).collect()[0][0]
    if differ:
        raise SystemExit(
            f"{suffix}: the mutable table and dbt-spark's table differ ({differ} rows)"
        )
    for model, run in last.items() if args.profile else ():
        print(f"{model}, {suffix}, last round: {statement_profile(run)}", flush=True)
    for model, summary in plans.items():
        if fmt == "delta":
            detail = spark.sql(f"describe detail bench.{model}_{suffix}").collect()[0]
            summary["table_files"] = detail["numFiles"]
        print(f"plan {model} {suffix}, last round: {json.dumps(summary)}", flush=True)
    return statistics.median(times["ours"]), statistics.median(times["peer"]), times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="delta", choices=sorted(LAYOUTS))
    parser.add_argument("--rows", default="1000000", help="comma-separated sizes")
    parser.add_argument(
        "--layouts", default=None, help="delta: plain,dv (default); iceberg: cow,mor (default)"
    )
    parser.add_argument("--shapes", default=DEFAULT_SHAPES, help="batch shapes")
    parser.add_argument("--profile", action="store_true", help="print each side's statements")
    parser.add_argument(
        "--plans",
        action="store_true",
        help="Spark's UI on: print each side's jobs, stages, shuffles and target scans",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary project")
    args = parser.parse_args()
    args.layouts = args.layouts or ",".join(LAYOUTS[args.format])
    unknown = set(args.layouts.split(",")) - set(LAYOUTS[args.format])
    unknown |= set(args.shapes.split(",")) - set(SHAPE_GOAL)
    if unknown:
        raise SystemExit(f"unknown layouts or shapes: {', '.join(sorted(unknown))}")
    settings = session_settings(args.format)

    work = Path(tempfile.mkdtemp(prefix=f"jammi-bench-{args.format}-"))
    project = work / "project"
    (project / "models").mkdir(parents=True)
    write_project(project, "bench", work / "spark", settings)
    if args.plans:
        enable_spark_ui(project)
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
            "| rows | layout | batch | mutable_table (median) | dbt-spark merge (median) "
            "| ratio | goal | rounds: ours / peer |"
        )
        print("|---|---|---|---:|---:|---:|---|---|")
        for rows in (int(r) for r in args.rows.split(",")):
            for layout in args.layouts.split(","):
                for shape in args.shapes.split(","):
                    ours, peer, times = measure(project, spark, rows, layout, shape, args)
                    rounds = " ".join(
                        f"{o:.2f}/{p:.2f}" for o, p in zip(times["ours"], times["peer"])
                    )
                    print(
                        f"| {rows:,} | {layout} | {shape} | {ours:.2f} s | {peer:.2f} s | "
                        f"{ours / peer:.2f}x | {SHAPE_GOAL[shape]} | {rounds} |",
                        flush=True,
                    )
                    report(
                        f"{args.format} {shape} ({layout}) vs dbt-spark merge",
                        rows,
                        ours,
                        peer,
                        f"{SHAPE_GOAL[shape]} dbt-spark merge",
                    )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
