"""Two `dbt run` processes, each on its own embedded Spark session (two driver JVMs that
share nothing but the catalog service), racing inserts into one Iceberg identity_column
table whose catalog is Iceberg's REST catalog server (the Iceberg lane's REST slice,
scripts/iceberg_lane.py --rest). The catalog's compare-and-swap of the table's metadata
decides which commit wins; the other run's fast-forward is refused and it re-plans
(docs/formats.md, "An Iceberg catalog service"). Per round: a run that reports success
has all its rows in the table (0 lost updates), a failed one has none, rows committed
earlier stay, and no identity number is held by two keys.

Skipped unless JAMMI_ICEBERG_REST_URI names the lane's server.
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import rest_catalog_uri, session_parameters
from tests.process.harness import (
    DbtProject,
    first_line,
    is_clear_failure,
    report,
    session_target,
)

pytestmark = pytest.mark.skipif(
    not rest_catalog_uri() or os.environ.get("JAMMI_TEST_FILE_FORMAT") != "iceberg",
    reason="needs the Iceberg lane's REST catalog server (make iceberg-rest-lane)",
)

ROUNDS = 2
ROWS = 100  # new keys per writer and round
WRITERS = ("a", "b")
REPLAN = "re-planning after a concurrent commit"

NUMBERED_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], identity_column='item_no',
          file_format='iceberg') }}
select cast({{ var('first_key') }} + id as bigint) as id, '{{ var('writer') }}' as writer
from range({{ var('rows') }})
"""


def writer_project(root: Path, schema: str, writer: str) -> DbtProject:
    """A project whose embedded session (its own session_dir: its own JVM and metastore)
    has the lane's REST catalog as its default catalog."""
    target = session_target(schema, root / f"session_{writer}")
    target["server_side_parameters"].update(session_parameters("iceberg"))
    models = {"numbered.sql": NUMBERED_SQL}
    return DbtProject(root=root / f"project_{writer}", target=target, models=models).write()


def dbt_run(writer: str, first_key: int, rows: int) -> list[str]:
    variables = {"writer": writer, "first_key": first_key, "rows": rows}
    return ["run", "--select", "numbered", "--vars", json.dumps(variables)]


def stored_rows(spark, table: str) -> list[tuple]:
    spark.sql(f"refresh table {table}")
    return [tuple(r) for r in spark.sql(f"select id, writer, item_no from {table}").collect()]


@pytest.fixture(scope="module")
def reader():
    """A Spark session in this process on the same catalog: the lane's shared one."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[1]")
    for key, value in session_parameters("iceberg").items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def test_racing_writers_on_a_rest_catalog_lose_nothing(tmp_path: Path, reader) -> None:
    schema = f"rest_race_{uuid.uuid4().hex[:8]}"
    table = f"{schema}.numbered"
    projects = {w: writer_project(tmp_path, schema, w) for w in ("seed", *WRITERS)}
    seed = projects["seed"].run(dbt_run("seed", 0, ROWS), "seed")
    assert seed.model("numbered").ok, seed.model("numbered").message
    counts: Counter = Counter()
    kept = {"the seed": 0}
    problems: list[str] = []
    for round_no in range(1, ROUNDS + 1):
        first = {w: 1_000_000 * round_no + 100_000 * WRITERS.index(w) for w in WRITERS}
        started = {
            w: projects[w].start(dbt_run(w, first[w], ROWS), f"round{round_no}-{w}")
            for w in WRITERS
        }
        results = {w: process.wait() for w, process in started.items()}
        rows = stored_rows(reader, table)
        for writer, result in results.items():
            outcome = result.model("numbered")
            counts["re-plans"] += result.output.count(REPLAN)
            found = sum(1 for r in rows if first[writer] <= r[0] < first[writer] + ROWS)
            if outcome.ok:
                counts["successes"] += 1
                if found != ROWS:
                    counts["lost updates"] += 1
                    problems.append(f"round {round_no}: {writer} succeeded, {found} rows stored")
            else:
                counts["clean failures" if is_clear_failure(outcome.message) else "unclear"] += 1
                if not is_clear_failure(outcome.message):
                    problems.append(f"{writer}: unclear failure {first_line(outcome.message)}")
                if found:
                    problems.append(f"round {round_no}: {writer} failed but {found} rows stored")
        numbers = Counter(r[2] for r in rows)
        shared = [n for n, c in numbers.items() if c > 1]
        counts["shared numbers"] += len(shared)
        if shared:
            problems.append(f"round {round_no}: numbers held by two keys: {shared[:5]}")
        for label, start in kept.items():  # the seed's and earlier rounds' commits stay
            held = sum(1 for r in rows if start <= r[0] < start + ROWS)
            if held != ROWS:
                counts["earlier commits lost"] += 1
                problems.append(f"round {round_no}: {label} holds {held} rows, not {ROWS}")
        kept.update(
            {f"{w} round {round_no}": first[w] for w in WRITERS if results[w].model("numbered").ok}
        )
    counts["numbers"] = len(stored_rows(reader, table))
    report(
        f"race rest catalog identity inserts (iceberg): rounds={ROUNDS} "
        + " ".join(
            f"{k}={counts[k]}"
            for k in (
                "successes",
                "clean failures",
                "unclear",
                "re-plans",
                "lost updates",
                "shared numbers",
                "numbers",
            )
        )
    )
    for row in reader.sql(f"show tables in {schema}").collect():  # a REST catalog's
        reader.sql(f"drop table if exists {schema}.{row[1]}")  # namespaces drop empty
    reader.sql(f"drop schema if exists {schema}")
    assert problems == [], "\n".join(problems)
    assert counts["successes"] >= ROUNDS  # at least one writer committed in every round
