"""Statements each materialization sends per run, next to dbt-spark's incremental model.

A small project on the embedded session (parquet): a mutable_table, an scd2 history, a
topic, a topic consumer (`incremental` reading `topic_events`) and a plain dbt-spark
`incremental` model; with Delta's jars (JAMMI_DELTA_JARS or .jars/, `make jars`) also a Delta
mutable_table and dbt-spark's Delta `merge` incremental. Every model is built once,
then run again on a changed batch; the second run's statements are counted per model
(the steady state a scheduled project sees) and listed with --list. Run:
    .venv/bin/python bench/bench_statements.py [--list]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from harness import dbt_run, statement_text, write_project

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from delta_lane import local_jars  # noqa: E402

MODELS = {
    "source_rows": """
{{ config(materialized='table', file_format='parquet') }}
select id, concat('item-', id + {{ var('round') }}) as name, {{ var('round') }} as version
from range(100)
""",
    "items": """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='parquet') }}
select id, name from {{ ref('source_rows') }}
""",
    "item_history": """
{{ config(materialized='mutable_table', primary_key=['id'], history='scd2',
          file_format='parquet') }}
select id, name, cast(version as bigint) as valid_from from {{ ref('source_rows') }}
""",
    "item_events": """
{{ config(materialized='topic', file_format='parquet') }}
select id, name from {{ ref('source_rows') }}
""",
    "item_event_log": """
{{ config(materialized='incremental', incremental_strategy='append', file_format='parquet') }}
select event_offset, event_row_idx, id, name from {{ topic_events(ref('item_events')) }}
""",
    "items_delta": """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='delta') }}
select id, name from {{ ref('source_rows') }}
""",
    "dbt_spark_merge_delta": """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',
          file_format='delta') }}
select id, name from {{ ref('source_rows') }}
""",
    "dbt_spark_incremental": """
{{ config(materialized='incremental', incremental_strategy='insert_overwrite',
          file_format='parquet') }}
select id, name from {{ ref('source_rows') }}
""",
}

KIND = {
    "items": "mutable_table",
    "item_history": "mutable_table (history: scd2)",
    "item_events": "topic (publish)",
    "item_event_log": "topic consumer (incremental + topic_events)",
    "items_delta": "mutable_table (delta)",
    "dbt_spark_merge_delta": "dbt-spark incremental (merge, delta)",
    "dbt_spark_incremental": "dbt-spark incremental (insert_overwrite)",
}
DELTA_MODELS = ("items_delta", "dbt_spark_merge_delta")


def per_model(statements: list[tuple[str, float]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for sql, _ in statements:
        match = re.search(r'"node_id": "model\.bench_statements\.(\w+)"', sql)
        if match:
            found.setdefault(match.group(1), []).append(statement_text(sql))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every statement")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="jammi-bench-statements-"))
    project = work / "project"
    (project / "models").mkdir(parents=True)
    jars = local_jars(os.environ.get("JAMMI_DELTA_JARS"))
    delta = {
        "spark.jars": jars,
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    }
    write_project(project, "bench_statements", work / "spark", delta if jars else None)
    for name, sql in MODELS.items():
        if jars or name not in DELTA_MODELS:
            (project / "models" / f"{name}.sql").write_text(sql)
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    try:
        dbt_run(project, "run", "--vars", json.dumps({"round": 1}))
        second = dbt_run(project, "run", "--vars", json.dumps({"round": 2}))
        counted = per_model(second.statements)
        print("| materialization | statements per run |")
        print("|---|---|")
        for name, kind in KIND.items():
            print(f"| {kind} | {len(counted.get(name, []))} |")
        if args.list:
            for name in KIND:
                print(f"\n{name}:")
                for text in counted.get(name, []):
                    print(f"  {text[:150]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
