"""At-least-once delivery is idempotent (docs/mutable_table.md#batch-rules).

A Debezium-shaped feed (inserts, updates, deletes by a version per key) delivered once,
and delivered twice over (every event twice in its batch, and the first batch's events
again in the second): both consumers end with the same table, on a plain consumer
(version rule with deletes) and on an scd2 consumer, and the response counts the rows
collapsed. Rows that differ at the same key and version still fail the run.
"""

from __future__ import annotations

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, run, table_rows

# (id, v, op, amount) per batch; op 'd' deletes the key.
BATCHES = {
    1: [(1, 1, "c", 10), (2, 1, "c", 20), (3, 1, "c", 30), (1, 2, "u", 11), (2, 2, "d", None)],
    2: [(3, 2, "u", 31), (4, 1, "c", 40), (1, 3, "d", None)],
}


def _values(events) -> str:
    def literal(value):
        if value is None:
            return "cast(null as int)"
        return f"'{value}'" if isinstance(value, str) else str(value)

    return ", ".join(f"({', '.join(literal(v) for v in event)})" for event in events)


def _feed(delivered_twice: bool) -> str:
    """The model's batch for var('batch'): its events, or, delivered twice, each event
    twice and the previous batch's events again."""
    branches = []
    for batch, events in BATCHES.items():
        sent = events * 2 if delivered_twice else events
        if delivered_twice and batch > 1:
            sent = BATCHES[batch - 1] + sent
        branches.append(
            f"{{% {'if' if batch == 1 else 'elif'} var('batch') == {batch} %}}\n"
            f"select * from values {_values(sent)} as t(id, v, op, amount)\n"
        )
    return "".join(branches) + "{% endif %}\n"


def _consumer(config: str, delivered_twice: bool) -> str:
    return (
        "{{ config(materialized='mutable_table', primary_key=['id']"
        + config
        + ") }\n"
        + _feed(delivered_twice)
    ).replace(") }\n", ") }}\n", 1)


class TestAFeedDeliveredTwiceEndsAsDeliveredOnce(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self, fmt):
        # Iceberg keeps no tombstones (issue 49): its consumer updates instead of deleting
        plain = ", version_column='v'" + (", delete_when=\"op = 'd'\"" if fmt != "iceberg" else "")
        scd2 = ", history='scd2', version_column='v'"
        return {
            "plain_once.sql": _consumer(plain, False),
            "plain_twice.sql": _consumer(plain, True),
            "history_once.sql": _consumer(scd2, False).replace("select *", "select id, v, amount"),
            "history_twice.sql": _consumer(scd2, True).replace("select *", "select id, v, amount"),
        }

    def test_same_tables_and_the_collapsed_rows_counted(self, project):
        collapsed = {}
        for batch in BATCHES:
            results = run(project, vars={"batch": batch})
            for result in results.results:
                collapsed[(result.node.name, batch)] = result.adapter_response.get("rows_collapsed")
        assert table_rows(project, "plain_twice", "id, v, op, amount") == table_rows(
            project, "plain_once", "id, v, op, amount"
        )
        current = "id, amount, {} is null"
        history_once = table_rows(project, "history_once", current.format("valid_to"), "1, 2, 3")
        history_twice = table_rows(project, "history_twice", current.format("valid_to"), "1, 2, 3")
        assert history_twice == history_once
        # 1: 11 then NULL, 2: NULL, 3: 30 then 31, 4: 40 -- two closed, four open
        assert len(history_once) == 6
        # every event twice in batch 1 (5 rows), batch 2's three twice plus batch 1's five
        # again (11 rows, 8 distinct)
        assert collapsed[("plain_twice", 1)] == 5 and collapsed[("plain_twice", 2)] == 3
        assert collapsed[("history_twice", 1)] == 5 and collapsed[("history_twice", 2)] == 3
        # delivered once, nothing to collapse: not looked for
        assert collapsed[("plain_once", 1)] is None and collapsed[("history_once", 2)] is None


DIFFERING = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='v') }}
select * from values (9, 1, 1), (9, 1, 1), (9, 1, 2) as t(id, v, amount)
"""


class TestRowsThatDifferAtOneVersionStillFail(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"differing.sql": DIFFERING}

    def test_refused_with_the_samples(self, project):
        results = run(project, "differing", expect_pass=False)
        message = results.results[0].message
        assert "several rows for the same key with the same highest version_column" in message
        assert "nothing was written" in message
