"""Helpers for mutable_table functional tests: read table state through Spark."""

from __future__ import annotations

import json
import os

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.jammi.mutable_table import table_properties
from tests.conftest import test_file_format

# The rewrite applier's format: parquet, or orc on the orc lane (`make orc-lane`).
REWRITE_FORMAT = "orc" if test_file_format() == "orc" else "parquet"

FILE_FORMATS = [
    REWRITE_FORMAT,
    pytest.param(
        "delta",
        marks=pytest.mark.skipif(
            test_file_format() != "delta",
            reason="Delta Lake is not on this session (run `make delta-lane` where it loads)",
        ),
    ),
    pytest.param(
        "iceberg",
        marks=pytest.mark.skipif(
            test_file_format() != "iceberg",
            reason="Iceberg is not on this session (run `make iceberg-lane` where it loads)",
        ),
    ),
]


def file_format() -> str:
    return test_file_format()


def rows(project, sql: str) -> list[tuple]:
    return [tuple(r) for r in project.run_sql(sql, fetch="all")]


def table_rows(project, table: str, columns: str = "*", order: str = "1") -> list[tuple]:
    return rows(project, f"select {columns} from {project.test_schema}.{table} order by {order}")


def run(
    project, model: str | None = None, vars: dict | None = None, expect_pass: bool = True, extra=()
):
    args = ["run"]
    if model:
        args += ["--select", model]
    if vars:
        args += ["--vars", json.dumps(vars)]
    args += list(extra)
    return run_dbt(args, expect_pass=expect_pass)


def table_exists(project, table: str) -> bool:
    found = rows(project, f"show tables in {project.test_schema} like '{table}'")
    return any(r[1] == table for r in found)


def registry_rows(project, table: str) -> list[tuple]:
    if not table_exists(project, "mutable_tables"):
        return []
    return rows(
        project,
        f"select table_id, file_format from {project.test_schema}.mutable_tables "
        f"where table_id = '{table}'",
    )


def location(project, table: str) -> str:
    for r in rows(project, f"describe table extended {project.test_schema}.{table}"):
        if r[0] == "Location":
            return r[1]
    raise AssertionError("no Location")


def version_dirs(project, table: str) -> list[str]:
    base = location(project, table).rsplit("/", 1)[0]
    path = base.replace("file:", "", 1)
    return sorted(d for d in os.listdir(path) if d.startswith("v"))


class MutableProjectBase:
    """A dbt project per class and file format; `fmt` is the format the class runs with.

    `fmt` is a class-scoped parameter. When pytest moves from one param to the next it
    tears down every fixture that depends on `fmt` -- through `project_config_update`
    that is dbt-tests-adapter's `dbt_project_yml`, `adapter`, `project_setup` and
    `project_files` -- and keeps the ones that do not. Its `project_root` (a tmpdir) and
    `unique_schema` depend on neither, so the second param would write its project into
    the first one's directory (`mkdir models`: FileExistsError) and reuse its schema
    name. Both depend on `fmt` here: each format gets a fresh project directory and its
    own schema, as if it were a class of its own.
    """

    @pytest.fixture(scope="class", params=FILE_FORMATS)
    def fmt(self, request):
        return request.param

    @pytest.fixture(scope="class")
    def project_root(self, tmpdir_factory, fmt):
        return tmpdir_factory.mktemp(f"project_{fmt}")

    @pytest.fixture(scope="class")
    def unique_schema(self, request, prefix, fmt) -> str:
        return f"{prefix}_{request.module.__name__.split('.')[-1]}_{fmt}"

    @pytest.fixture(scope="class")
    def project_config_update(self, fmt):
        return {"models": {"+file_format": fmt}}


def unchanged_batch_commits(fmt: str) -> bool:
    """Whether a batch that changes nothing still commits a version: the batch-sourced
    MERGE (Delta; Iceberg on Spark >= 4.1, commit/iceberg_merge.py) rewrites the files
    holding the batch's keys. Elsewhere the counted change set is empty and nothing runs."""
    import pyspark

    from dbt.adapters.jammi.mutable_table.commit.iceberg_merge import counts_in_snapshot

    return fmt == "delta" or (fmt == "iceberg" and counts_in_snapshot(pyspark.__version__))


def table_version(project, table: str, fmt: str):
    """What a commit changes: the version directory (parquet/orc), the current snapshot
    (iceberg), the table version (Delta)."""
    if fmt == "delta":
        return int(rows(project, f"describe history {project.test_schema}.{table} limit 1")[0][0])
    if fmt == "iceberg":
        found = rows(
            project,
            f"select snapshot_id from {project.test_schema}.{table}.history "
            "order by made_current_at desc limit 1",
        )
        return found[0][0] if found else None
    return location(project, table)


def properties(project, table: str) -> dict:
    return dict(rows(project, f"show tblproperties {project.test_schema}.{table}"))


def leftovers(project, table: str) -> list[str]:
    """Relations a run of ``table`` created beside it (staging tables, claims) that are
    still in the schema. An Iceberg changelog's records (``<table>__jammi_changelog``)
    are the table's own, kept like it (rules/changelog_iceberg.py)."""
    found = rows(project, f"show tables in {project.test_schema} like '{table}__jammi_*'")
    kept = f"{table}__jammi_changelog"
    return sorted(r[1] for r in found if not r[2] and r[1] != kept)


def stored_definition(project, table: str) -> dict | None:
    """The definition recorded in the table's properties (hex-encoded JSON)."""
    return table_properties.stored_definition(properties(project, table))


def session_views(project) -> list[str]:
    """Views the session holds in the test schema, session temp views included."""
    return [r[1] for r in rows(project, f"show views in {project.test_schema}")]
