"""A run's plan (commit/run_plan.py), decided without Spark: the path, where the batch
checks run, whether the MERGE reports the counts, how many attempts."""

from __future__ import annotations

from typing import Any

import pytest

from dbt.adapters.jammi.mutable_table.commit.run_plan import COMMIT_ATTEMPTS, plan_run
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

SCHEMA = {"id": "bigint", "name": "string", "v": "bigint"}


def definition(**config: Any) -> dict:
    config.setdefault("primary_key", ["id"])
    return MutableTableDefinition.from_config("t", SCHEMA, config).to_dict()


@pytest.mark.parametrize(
    "file_format, existing, config, path, checks",
    [
        ("parquet", False, {}, "create", "in_plan"),
        ("delta", False, {}, "create", "separate"),
        ("delta", True, {}, "merge_batch", "in_merge"),
        ("delta", True, {"history": "scd2"}, "merge_change_set", "separate"),
        ("delta", True, {"ttl_ms": 1000, "ttl_column": "v"}, "merge_change_set", "separate"),
        ("iceberg", True, {}, "merge_change_set", "separate"),
        ("parquet", True, {}, "rewrite", "in_plan"),
        ("orc", True, {"history": "scd2"}, "rewrite", "separate"),
    ],
)
def test_the_path_and_where_the_checks_run(file_format, existing, config, path, checks):
    plan = plan_run(definition(**config), file_format, existing, {})
    assert (plan.path, plan.checks) == (path, checks)
    assert plan.attempts == (COMMIT_ATTEMPTS if existing else 1)


@pytest.mark.parametrize(
    "writer", ["rebuild", "adoption", "new_columns", "schema_evolution", "changelog"]
)
def test_anything_written_before_the_plan_moves_the_checks_first(writer):
    for file_format in ("delta", "parquet"):
        plan = plan_run(definition(), file_format, True, {writer: True, "new_properties": False})
        assert plan.checks == "separate"
        assert plan.writes_first == (writer,)


def test_the_merge_reports_counts_on_delta_unless_a_unique_index_needs_them_first():
    assert plan_run(definition(), "delta", True, {}).counts_from_merge
    indexed = definition(indexes=[{"name": "by_name", "columns": ["name"], "unique": True}])
    assert not plan_run(indexed, "delta", True, {}).counts_from_merge
    assert not plan_run(definition(), "iceberg", True, {}).counts_from_merge
    assert not plan_run(definition(), "delta", False, {}).counts_from_merge


def test_the_plan_is_frozen_and_reaches_jinja_as_a_dict():
    plan = plan_run(definition(), "parquet", True, {})
    with pytest.raises(AttributeError):
        plan.path = "create"  # type: ignore[misc]
    assert plan.path == "rewrite"


@pytest.mark.parametrize(
    "spark_version, config, path",
    [
        ("3.5.6", {}, "merge_change_set"),
        ("4.0.1", {}, "merge_change_set"),
        ("4.1.4", {}, "merge_batch"),
        ("4.2.0", {"hard_deletes": "delete"}, "merge_batch"),
        # what commits with the MERGE on a branch needs the planned change set
        ("4.1.4", {"changelog": True}, "merge_change_set"),
        ("4.1.4", {"version_column": "v", "delete_when": "name = 'x'"}, "merge_change_set"),
        ("4.1.4", {"identity_column": "v"}, "merge_change_set"),
        ("4.1.4", {"history": "scd2"}, "merge_change_set"),
    ],
)
def test_iceberg_merges_the_batch_where_its_snapshot_counts(spark_version, config, path):
    plan = plan_run(definition(**config), "iceberg", True, {}, spark_version)
    assert plan.path == path
    assert plan.checks == ("in_merge" if path == "merge_batch" else "separate")
    assert plan.counts_from_merge == (path == "merge_batch")
