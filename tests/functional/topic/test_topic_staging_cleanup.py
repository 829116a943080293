"""What failed parquet publishes leave under `_staging/` is removed once it is provably
abandoned: staged more than a day ago (no claim accepts a batch staged more than 12 h
ago) and not the location of a partition (a committed batch lives on where it was
staged). Younger batches may belong to a concurrent publish and are left alone."""

from __future__ import annotations

import os
import time

import pytest
from dbt.tests.util import run_dbt

from tests.conftest import test_file_format
from tests.functional.topic.fixtures import CDC_ORDERS_SQL, TopicProject, registration, rows

DAY_S = 24 * 3600


def stage_sql(path: str, tag: str) -> str:
    return (
        f"insert overwrite directory '{path}' using parquet select "
        "cast(id as bigint) as _row_idx, unix_micros(current_timestamp()) as _produced_at, "
        f"cast(id as int) as order_id, '{tag}' as op, cast(id as int) as amount, "
        "cast(null as string) as tenant_id from range(4)"
    )


def on_disk(path: str) -> bool:
    return os.path.exists(path.replace("file:", "", 1))


@pytest.mark.skipif(
    test_file_format() == "delta",
    reason="parquet staging directories (on delta: TestTopicStageTableCleanupDelta)",
)
@pytest.mark.session_only
class TestTopicStagingCleanup(TopicProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"cdc_orders.sql": CDC_ORDERS_SQL}

    def test_only_abandoned_staged_batches_are_removed(self, project):
        schema = project.test_schema
        run_dbt(["run", "--vars", "{batch: 1}"])
        _, _, backing_name = registration(schema)
        backing = f"{schema}.{backing_name}"
        location = [r[1] for r in rows(f"DESCRIBE TABLE EXTENDED {backing}") if r[0] == "Location"][
            0
        ]
        now = int(time.time())
        abandoned = f"{location}/_staging/{now - 2 * DAY_S}_aaaaaaaaaaaa"
        committed = f"{location}/_staging/{now - 2 * DAY_S}_bbbbbbbbbbbb"
        in_flight = f"{location}/_staging/{now}_cccccccccccc"
        for path, tag in ((abandoned, "a"), (committed, "b"), (in_flight, "c")):
            rows(stage_sql(path, tag))
        # an old batch that was committed: its partition points at the staged directory
        rows(f"ALTER TABLE {backing} ADD PARTITION (_offset=2) LOCATION '{committed}'")

        run_dbt(["run", "--vars", "{batch: 3}"])

        assert not on_disk(abandoned)
        assert on_disk(committed)
        assert on_disk(in_flight)  # may belong to a publish still in flight
        assert rows(f"SELECT _offset, count(*) FROM {backing} GROUP BY 1 ORDER BY 1") == [
            (1, 3),
            (2, 4),
            (3, 3),
        ]


@pytest.mark.skipif(test_file_format() != "delta", reason="delta stages into tables (delta lane)")
class TestTopicStageTableCleanupDelta:
    """Delta publishes stage into `<backing>__stage_<epoch s>_<id>` tables; one that a
    failed publish left more than a day ago is dropped by the next publish, a younger one
    (maybe a publish in flight) is kept."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "delta"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {"cdc_orders.sql": CDC_ORDERS_SQL}

    def test_only_abandoned_stage_tables_are_dropped(self, project):
        schema = project.test_schema
        run_dbt(["run", "--vars", "{batch: 1}"])
        _, _, backing_name = registration(schema)
        now = int(time.time())
        abandoned = f"{backing_name}__stage_{now - 2 * DAY_S}_aaaaaaaaaaaa"
        in_flight = f"{backing_name}__stage_{now}_cccccccccccc"
        for name in (abandoned, in_flight):
            rows(f"create table {schema}.{name} using parquet as select 1 as x")

        run_dbt(["run", "--vars", "{batch: 3}"])

        tables = {r[1] for r in rows(f"show tables in {schema} like '{backing_name}__stage_*'")}
        assert abandoned not in tables
        assert in_flight in tables  # may belong to a publish still in flight
        offsets = rows(
            f"SELECT _offset, count(*) FROM {schema}.{backing_name} GROUP BY 1 ORDER BY 1"
        )
        assert offsets == [(1, 3), (2, 3)]
