"""Publishing to a topic: naming, registry, offsets, atomicity (docs/topic.md)."""

from __future__ import annotations

import os
import re

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.jammi.topic import row_index
from tests.conftest import test_file_format
from tests.functional.topic.fixtures import (
    CDC_ORDERS_SQL,
    TopicProject,
    columns_of,
    registration,
    rows,
)

TOPIC_ID = re.compile(r"^[0-9a-f]{8}_[0-9a-f]{4}_7[0-9a-f]{3}_[89ab][0-9a-f]{3}_[0-9a-f]{12}$")


class TestTopicPublish(TopicProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"cdc_orders.sql": CDC_ORDERS_SQL}

    @pytest.mark.smoke
    def test_three_publishes(self, project):
        schema = project.test_schema
        for batch in (1, 2, 3):
            results = run_dbt(["run", "--vars", f"{{batch: {batch}}}"])
            assert [r.status for r in results] == ["success"]

        topic_id, name, backing = registration(schema)
        assert name == "cdc.orders"
        assert TOPIC_ID.match(topic_id), topic_id
        assert backing == f"__topic_{topic_id}"

        # backing table schema: engine columns, user columns, tenant_id
        described = {
            r[0]: r[1]
            for r in rows(f"DESCRIBE TABLE {schema}.{backing}")
            if r[0] and not r[0].startswith("#")
        }
        assert described == {
            "_offset": "bigint",
            "_row_idx": "bigint",
            "_produced_at": "bigint",
            "order_id": "int",
            "op": "string",
            "amount": "int",
            "tenant_id": "string",
        }
        # ref() resolves to a view named after the model, columns in contract order
        view_columns = columns_of(f"{schema}.cdc_orders")
        assert view_columns == [
            "_offset",
            "_row_idx",
            "_produced_at",
            "order_id",
            "op",
            "amount",
            "tenant_id",
        ]
        kinds = {r[1]: r[2] for r in rows(f"SHOW TABLES IN {schema}")}
        assert "cdc_orders" in kinds

        events = rows(
            f"SELECT _offset, _row_idx, order_id, op FROM {schema}.{backing} "
            "ORDER BY _offset, _row_idx"
        )
        assert events == [
            (1, 0, 1, "c"),
            (1, 1, 2, "c"),
            (1, 2, 3, "c"),
            (2, 0, 2, "u"),
            (2, 1, 1, "d"),
            (3, 0, 4, "c"),
            (3, 1, 3, "d"),
            (3, 2, 2, "d"),
        ]
        produced = rows(
            f"SELECT _offset, count(DISTINCT _produced_at), min(_produced_at) "
            f"FROM {schema}.{backing} GROUP BY _offset ORDER BY _offset"
        )
        assert [(o, n) for o, n, _ in produced] == [(1, 1), (2, 1), (3, 1)]
        # UTC microseconds of "now"-ish (after 2020, before 2100)
        assert all(1_577_836_800_000_000 < p < 4_102_444_800_000_000 for *_, p in produced)
        tenant_rows = f"SELECT count(*) FROM {schema}.cdc_orders WHERE tenant_id IS NOT NULL"
        assert rows(tenant_rows) == [(0,)]

        # docs/topic.md's hourly delete rollup
        rollup = rows(
            "SELECT date_trunc('hour', timestamp_micros(_produced_at)) AS hour, "
            "count(*) AS deletes "
            f"FROM {schema}.__topic_{topic_id} WHERE op = 'd' GROUP BY 1 ORDER BY 1"
        )
        assert sum(r[1] for r in rollup) == 3
        expected = {}
        for p, n in rows(
            f"SELECT _produced_at, count(*) FROM {schema}.{backing} WHERE op = 'd' GROUP BY 1"
        ):
            hour = p // 3_600_000_000
            expected[hour] = expected.get(hour, 0) + n
        assert [(int(r[0].timestamp()) // 3600, r[1]) for r in rollup] == sorted(expected.items())


class TestTopicFailedPublish(TopicProject):
    """A run that fails after the batch was written publishes nothing."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"cdc_orders.sql": CDC_ORDERS_SQL}

    def test_failed_run_leaves_no_partial_publish(self, project):
        schema = project.test_schema
        run_dbt(["run", "--vars", "{batch: 1}"])
        _, _, backing = registration(schema)
        # The batch is fully staged, then a post-hook fails before the offset is claimed.
        failing = ["run", "--vars", "{batch: 2}", "--fail-fast"]
        # (spark.sql is lazy for queries; a missing table fails at analysis, eagerly)
        hook = "select count(*) from {{ this.schema }}.audit_table_that_does_not_exist"
        with open(os.path.join(project.project_root, "models", "cdc_orders.sql"), "w") as f:
            f.write(
                CDC_ORDERS_SQL.replace(
                    "topic_name='cdc.orders'", f"topic_name='cdc.orders', post_hook=\"{hook}\""
                )
            )
        results = run_dbt(failing, expect_pass=False)
        assert [r.status for r in results] == ["error"]
        assert rows(f"SELECT DISTINCT _offset FROM {schema}.{backing}") == [(1,)]
        assert rows(f"SELECT count(*) FROM {schema}.cdc_orders") == [(3,)]
        if test_file_format() == "parquet":
            # the staged files exist on disk, but no partition points at them
            location = [
                r[1]
                for r in rows(f"DESCRIBE TABLE EXTENDED {schema}.{backing}")
                if r[0] == "Location"
            ][0]
            staging = location.replace("file:", "") + "/_staging"
            staged = [d for d in os.listdir(staging)]
            assert len(staged) == 2  # offset 1's partition and the failed batch
            assert len(rows(f"SHOW PARTITIONS {schema}.{backing}")) == 1

        # the retry publishes the batch once, under the next offset
        with open(os.path.join(project.project_root, "models", "cdc_orders.sql"), "w") as f:
            f.write(CDC_ORDERS_SQL)
        run_dbt(["run", "--vars", "{batch: 2}"])
        assert rows(f"SELECT _offset, count(*) FROM {schema}.{backing} GROUP BY 1 ORDER BY 1") == [
            (1, 3),
            (2, 2),
        ]


# A batch produced by 7 tasks (range's last argument), in a known order: row n of the
# output has n = _row_idx when positions are the 0-based places in the model's output.
SPREAD_SQL = """
{{ config(materialized='topic', topic_name='spread.rows',
          pre_hook="set spark.sql.exchange.reuse=" ~ var('reuse', 'true')) }}
select cast(id as bigint) as n, cast(id % 3 as int) as bucket from range(0, 20000, 1, 7)
"""


class TestTopicRowIndexAcrossPartitions(TopicProject):
    """_row_idx of a small batch is numbered in one task; of a large one without a
    single-task stage, and with exchange reuse off (where that numbering could see the
    batch twice) in one window: all must give the 0-based contiguous positions of
    the model's output. "Large" is forced by lowering the thresholds to nothing."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"spread_rows.sql": SPREAD_SQL}

    @pytest.mark.iceberg_lane_skip
    def test_positions_are_contiguous_and_in_output_order(self, project, monkeypatch):
        schema = project.test_schema
        run_dbt(["run"])
        assert "COALESCE(1)" in staged_sql(project), "a small batch: one task"
        monkeypatch.setattr(row_index, "SMALL_BATCH_ROWS", 0)
        monkeypatch.setattr(row_index, "SMALL_BATCH_BYTES", 0)
        run_dbt(["run"])
        assert "__jammi_part" in staged_sql(project), "a large batch: numbered in parallel"
        try:
            run_dbt(["run", "--vars", "{reuse: 'false'}"])
            staged = staged_sql(project)
            assert "row_number()" in staged and "COALESCE" not in staged, "reuse off: a window"
        finally:
            run_dbt(["run", "--vars", "{reuse: 'true'}"])  # the shared session as found
        per_offset = rows(
            "SELECT _offset, count(*), count(DISTINCT _row_idx), min(_row_idx), max(_row_idx), "
            f"count_if(_row_idx != n) FROM {schema}.spread_rows GROUP BY _offset ORDER BY _offset"
        )
        assert per_offset == [(o, 20000, 20000, 0, 19999, 0) for o in (1, 2, 3, 4)]


ORDERED_SQL = """
{{ config(materialized='topic', topic_name='ordered.rows', row_idx='ordered') }}
select cast(id as bigint) as n from range(0, 20000, 1, 7)
"""

ORDERED_TESTS = """
version: 2
models:
  - name: ordered_rows
    data_tests:
      - topic_offsets:
          arguments:
            contiguous: false
      - topic_offsets:
          name: ordered_rows_contiguous
"""


class TestTopicOrderedRowIndex(TopicProject):
    """row_idx: ordered: each of the 7 tasks' rows keep their places in the model's
    output, unique and increasing, with a gap after each task; topic_offsets passes
    with contiguous: false and fails as the default (contiguous) test."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"ordered_rows.sql": ORDERED_SQL, "schema.yml": ORDERED_TESTS}

    def test_positions_are_unique_increasing_and_in_output_order(self, project):
        schema = project.test_schema
        run_dbt(["run"])
        run_dbt(["run"])
        assert "monotonically_increasing_id() as bigint) as _row_idx" in staged_sql(
            project, "ordered_rows.sql"
        )
        per_offset = rows(
            "SELECT _offset, count(*), count(DISTINCT _row_idx), min(_row_idx), "
            "max(_row_idx) > count(*) - 1, count_if(place != n) FROM ("
            "  SELECT _offset, _row_idx, n, "
            "  row_number() OVER (PARTITION BY _offset ORDER BY _row_idx) - 1 AS place "
            f"  FROM {schema}.ordered_rows) GROUP BY _offset ORDER BY _offset"
        )
        assert per_offset == [(o, 20000, 20000, 0, True, 0) for o in (1, 2)]
        results = {r.node.name: r.status for r in run_dbt(["test"], expect_pass=False)}
        assert len(results) == 2 and results.pop("ordered_rows_contiguous") == "fail", results
        assert list(results.values()) == ["pass"], results


def staged_sql(project, model_file: str = "spread_rows.sql") -> str:
    """The statement the last run staged its batch with (dbt's target/run copy)."""
    run_dir = os.path.join(project.project_root, "target", "run")
    for root, _, files in os.walk(run_dir):
        if model_file in files:
            with open(os.path.join(root, model_file)) as f:
                return f.read()
    raise AssertionError(f"no {model_file} under {run_dir}")
