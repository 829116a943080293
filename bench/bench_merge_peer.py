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

  feed         a change feed on a table laid out by key range (use with --files):
               0.5% of the keys updated among the newest 2%, 10 old keys, and 0.5%
               new keys each round

Each shape has its own pair of tables, built from the same N rows (with --files F, a
base of F files by key range, and each side's first build keeps one task per file).
The rounds are paired and alternating (bench/paired.py): --warmup rounds discarded,
then --rounds rounds, the side that runs first alternating; each round writes a fresh
batch table and reads it once (so neither side pays for the first read of new files),
then runs both sides (dbt's execution time of the model). The figure is the median of
the pairs (each round with the next, by the geometric mean of their ratios), with their
spread; bench/run_all.py pools the pairs of every process. After the rounds both
tables must hold the same rows, or the benchmark fails. --settle gc asks the JVM for a
full collection before each side's run.

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
        [--shapes 1pct,100keys,half_repeat,snapshot,feed] [--files 200]
        [--rounds 10] [--warmup 1] [--settle gc] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from harness import (
    bench_fields,
    dbt,
    dbt_run,
    enable_spark_ui,
    plan_summary,
    report,
    spark_ui_executions,
    statement_profile,
    write_project,
)
from paired import BASELINE, OURS, PairedFigure, run_rounds

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from delta_lane import local_jars  # noqa: E402
from iceberg_probe import ICEBERG_CONFS, SINGLE_WRITER_CONFS  # noqa: E402
from spark_thrift_server import server_format_jars  # noqa: E402

OURS_MODEL = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format=var('format'),
          hard_deletes=var('hard_deletes', 'ignore'), alias='ours_' ~ var('suffix')) }}
select * from {{ var('source') }}
"""

PEER_MODEL = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',
          file_format=var('format'), alias='peer_' ~ var('suffix')) }}
select * from {{ var('source') }}
"""

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
    if shape == "feed":
        newest, fresh = rows - rows // 50, max(rows // 200, 1)
        return f"""select id, {changed_row(round_no)} from range({newest}, {rows})
            where id % 4 = {round_no % 4}
            union all
            select id, {changed_row(round_no)} from range({newest}) where id % {newest // 10} = 7
            union all
            select id, {changed_row(round_no)}
            from range({rows + round_no * fresh}, {rows + (round_no + 1) * fresh})"""
    if shape == "100keys":
        return f"select id, {changed_row(round_no)} from range({rows}) where id % {rows // 100} = 0"
    # half_repeat: keys with id % 200 = 100 repeat their stored (base) values every round
    return f"""select id, {changed_row(round_no)} from range({rows}) where id % 200 = 0
        union all
        select id, {BASE_ROW}, 1000 as updated_ms from range({rows}) where id % 200 = 100"""


# docs/performance.md's goals (ours / peer, each side's own defaults)
SHAPE_GOAL = {
    "1pct": "<= 0.8x (equal layouts <= 1.0x)",
    "100keys": "<= 0.8x (equal layouts <= 1.0x)",
    "half_repeat": "<= 0.8x (equal layouts <= 1.0x)",
    "snapshot": "<= 0.5x",
    "feed": "<= 0.6x",
    "all": "<= 1.5x",
    "noop": "commits nothing; <= 0.3x",
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


def table_files(spark, table: str, fmt: str) -> int:
    """How many data files ``table`` holds now."""
    if fmt == "delta":
        return int(spark.sql(f"describe detail {table}").collect()[0]["numFiles"])
    return int(spark.sql(f"select count(*) from {table}.files").collect()[0][0])


def build_pair(project: Path, spark, rows: int, suffix: str, layout: str, args) -> dict:
    """The base table of ``rows`` (in ``args.files`` files by key range when given) and
    each side's first build from it; each side's file count."""
    fmt, base = args.format, f"bench.base_{rows}_{args.files or 0}"
    if not spark.catalog.tableExists(base):
        hint = f"/*+ REPARTITION_BY_RANGE({args.files}, id) */ " if args.files else ""
        spark.sql(
            f"create table {base} using {fmt} as "
            f"select {hint}id, {BASE_ROW}, 1000 as updated_ms from range({rows})"
        )
    if args.files:  # one task per base file: each side's first build keeps the layout
        spark.conf.set("spark.sql.files.openCostInBytes", str(1 << 30))
    for model in ("ours", "peer"):
        variables = {"source": base, "suffix": suffix, "format": fmt, "hard_deletes": "ignore"}
        dbt(project, "run", "-s", model, "--vars", json.dumps(variables))
        if LAYOUTS[fmt][layout]:
            spark.sql(f"alter table bench.{model}_{suffix} {LAYOUTS[fmt][layout]}")
    spark.conf.unset("spark.sql.files.openCostInBytes")
    return {model: table_files(spark, f"bench.{model}_{suffix}", fmt) for model in ("ours", "peer")}


def measure(project: Path, spark, rows: int, layout: str, shape: str, args) -> tuple:
    suffix = f"{rows}_{layout}_{shape}"
    fmt = args.format
    files = build_pair(project, spark, rows, suffix, layout, args)
    print(f"{suffix}: files ours {files['ours']}, peer {files['peer']}", flush=True)
    hard_deletes = "delete" if shape == "snapshot" else "ignore"
    model_of = {OURS: "ours", BASELINE: "peer"}
    last, plans = {}, {}

    def prepare(round_no: int) -> None:
        batch = f"bench.batch_{suffix}_{round_no}"
        spark.sql(f"create table {batch} using {fmt} as {batch_sql(shape, rows, round_no)}")
        spark.sql(f"select count(*), sum(hash({COLUMNS})) from {batch}").collect()

    def run_side(side: str, round_no: int) -> float:
        model = model_of[side]
        variables = json.dumps(
            {
                "source": f"bench.batch_{suffix}_{round_no}",
                "suffix": suffix,
                "format": fmt,
                "hard_deletes": hard_deletes,
            }
        )
        if args.settle == "gc":
            spark.sparkContext._jvm.System.gc()
        seen = {e["id"] for e in spark_ui_executions(spark)} if args.plans else set()
        run = dbt_run(project, "run", "-s", model, "--vars", variables)
        if args.plans:
            executions = [e for e in spark_ui_executions(spark) if e["id"] not in seen]
            plans[model] = plan_summary(spark, executions, f"{model}_{suffix}")
        last[model] = run
        return run.execution

    rounds = run_rounds(args.rounds, prepare, run_side, warmup=args.warmup)
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
        summary["table_files"] = table_files(spark, f"bench.{model}_{suffix}", fmt)
        print(f"plan {model} {suffix}, last round: {json.dumps(summary)}", flush=True)
    return rounds, files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", default="delta", choices=sorted(LAYOUTS))
    parser.add_argument("--rows", default="1000000", help="comma-separated sizes")
    parser.add_argument(
        "--layouts", default=None, help="delta: plain,dv (default); iceberg: cow,mor (default)"
    )
    parser.add_argument("--shapes", default=DEFAULT_SHAPES, help="batch shapes")
    parser.add_argument("--files", type=int, default=0, help="the base table's files, by key range")
    parser.add_argument("--rounds", type=int, default=10, help="measured rounds (even)")
    parser.add_argument("--warmup", type=int, default=1, help="discarded rounds first")
    parser.add_argument("--settle", choices=["none", "gc"], default="none")
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
    (project / "models" / "ours.sql").write_text(OURS_MODEL)
    (project / "models" / "peer.sql").write_text(PEER_MODEL)
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    try:
        dbt(project, "debug")
        from pyspark.sql import SparkSession

        spark = SparkSession.builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        spark.sql("create schema if not exists bench")
        print(
            "| rows | layout | batch | files ours / peer | mutable_table (median) "
            "| dbt-spark merge (median) | ratio (pairs) | goal | ran first: ours / peer |"
        )
        print("|---|---|---|---|---:|---:|---|---|---|")
        for rows in (int(r) for r in args.rows.split(",")):
            for layout in args.layouts.split(","):
                for shape in args.shapes.split(","):
                    rounds, files = measure(project, spark, rows, layout, shape, args)
                    fields = bench_fields(rounds)
                    figure = PairedFigure(tuple(fields["pairs"]))
                    print(
                        f"| {rows:,} | {layout} | {shape} | {files['ours']} / {files['peer']} "
                        f"| {fields['ours_median']:.2f} s | {fields['baseline_median']:.2f} s "
                        f"| {figure.describe()} | {SHAPE_GOAL[shape]} "
                        f"| {fields['first_cost_ours']:.2f}x / "
                        f"{fields['first_cost_baseline']:.2f}x |",
                        flush=True,
                    )
                    report(
                        f"{args.format} {shape} ({layout}) vs dbt-spark merge",
                        rows,
                        fields.pop("ours_median"),
                        fields.pop("baseline_median"),
                        f"{SHAPE_GOAL[shape]} dbt-spark merge",
                        files=files,
                        **fields,
                    )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
