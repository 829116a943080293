"""Two publishers claim offsets on the same topic at the same time.

The embedded Hive metastore belongs to one JVM, so the publishers meet there: two
threads, each with its own ``SparkSession.newSession()`` (own SQL conf and temp views,
shared SparkContext and metastore), stage their batch and then commit it with the same
``claim_offset`` code the materialization calls. A barrier right before both commit makes
them race for the *same* next offset. Parquet: both read the same partition list, the
metastore's ``ADD PARTITION`` admits one and refuses the other, which re-reads and claims
the next. Delta: both append with ``max(_offset) + 1`` read in the same transaction; the
backing table is ``Serializable``, so Delta refuses the later commit
(``ConcurrentAppendException``) and the loser appends again on the new snapshot.
Iceberg: both read the same ``max(_offset)`` and MERGE the same offset; Iceberg's
serializable validation refuses the later commit, or its scan already sees the offset
stored, and the loser reads again and takes the next.
"""

from __future__ import annotations

import threading

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.jammi.topic import publish
from dbt.adapters.jammi.topic.topic_formats import topic_format
from tests.conftest import test_file_format
from tests.functional.topic.fixtures import CDC_ORDERS_SQL, TopicProject, registration, rows, spark

ROUNDS = 3
ROWS_PER_BATCH = 50


@pytest.mark.session_only
class TestTopicConcurrentPublishers(TopicProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"cdc_orders.sql": CDC_ORDERS_SQL}

    def test_concurrent_publishers_get_distinct_offsets(self, project):
        schema = project.test_schema
        run_dbt(["run", "--vars", "{batch: 1}"])
        _, _, backing_name = registration(schema)
        backing = f"{schema}.{backing_name}"
        fmt = test_file_format()
        described = rows(f"DESCRIBE TABLE EXTENDED {backing}")
        location = [r[1] for r in described if r[0] == "Location"][0]
        # the columns a delta publish appends after _offset, in the table's order
        columns = []
        for r in described:
            if not r[0] or r[0].startswith("#"):
                break
            if r[0] != "_offset":
                columns.append(r[0])

        conflicts: list[str] = []
        claimed: dict[tuple[int, str], int] = {}
        errors: list[BaseException] = []

        def publisher(round_no: int, name: str, barrier: threading.Barrier) -> None:
            session = spark().newSession()
            first_claim = [True]

            commit_prefix = {"parquet": "alter table", "delta": "insert into"}.get(
                fmt, "merge into"
            )

            def run_sql(sql: str):
                if sql.startswith(commit_prefix) and first_claim[0]:
                    first_claim[0] = False
                    barrier.wait(timeout=60)  # both commit from the same offsets
                try:
                    return [tuple(r) for r in session.sql(sql).collect()]
                except Exception as exc:
                    if topic_format(fmt).lost_claim(str(exc)):
                        conflicts.append(name)
                    raise

            batch = (
                "select cast(id as bigint) as _row_idx, "
                "unix_micros(current_timestamp()) as _produced_at, "
                f"cast({round_no * 1000} + id as int) as order_id, '{name}' as op, "
                "cast(id as int) as amount, cast(null as string) as tenant_id "
                f"from range({ROWS_PER_BATCH})"
            )
            if fmt == "parquet":
                staging = f"{location}/_staging/test_{round_no}_{name}"
                session.sql(f"insert overwrite directory '{staging}' using parquet {batch}")
            else:
                staging = f"{backing}__stage_test_{round_no}_{name}"
                using = "iceberg" if fmt == "iceberg" else "parquet"
                session.sql(f"create table {staging} using {using} as {batch}")
            try:
                claimed[(round_no, name)] = publish.claim_offset(
                    run_sql, backing, staging, fmt, columns
                )
            except BaseException as exc:  # surfaced by the assertion below
                errors.append(exc)

        for round_no in range(ROUNDS):
            barrier = threading.Barrier(2)
            threads = [
                threading.Thread(target=publisher, args=(round_no, name, barrier))
                for name in ("p", "q")
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=300)
        assert errors == []

        offsets = sorted(claimed.values())
        print(
            f"\ntopic concurrent publishers ({fmt}, in-JVM): rounds={ROUNDS} "
            f"publishes={len(offsets)} conflicts retried={len(conflicts)} "
            f"distinct offsets={len(set(offsets))}"
        )
        assert offsets == list(range(2, 2 + 2 * ROUNDS))  # distinct, no gaps
        # every round the two raced for one offset: one of them was refused and retried
        assert len(conflicts) >= ROUNDS
        if fmt == "iceberg":
            # this session's Iceberg catalog caches the table it loaded before the race
            rows(f"REFRESH TABLE {backing}")
        per_offset = rows(
            f"SELECT _offset, count(*), count(DISTINCT op), count(DISTINCT _row_idx) "
            f"FROM {backing} GROUP BY _offset ORDER BY _offset"
        )
        assert [r[0] for r in per_offset] == list(range(1, 2 + 2 * ROUNDS))
        assert per_offset[0] == (1, 3, 1, 3)
        assert all(r[1:] == (ROWS_PER_BATCH, 1, ROWS_PER_BATCH) for r in per_offset[1:])
        for (round_no, name), offset in claimed.items():
            assert rows(
                f"SELECT count(*), min(order_id), max(order_id) FROM {backing} "
                f"WHERE _offset = {offset} AND op = '{name}'"
            ) == [(ROWS_PER_BATCH, round_no * 1000, round_no * 1000 + ROWS_PER_BATCH - 1)]

        # a dbt publish after the race continues the sequence
        run_dbt(["run", "--vars", "{batch: 2}"])
        assert rows(f"SELECT max(_offset) FROM {backing}") == [(2 + 2 * ROUNDS,)]
