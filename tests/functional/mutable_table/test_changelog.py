"""changelog: true -- every committed version of a mutable table is one publish of its
changelog topic, equal to the table's diff between the two versions, exactly once even
when the run stops between the table commit and the publish; consumers read it with
topic_events(ref(table)) like any topic."""

import json

import pytest
from dbt.tests.util import run_dbt

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    properties,
    rows,
    run,
    session_views,
    table_exists,
    table_rows,
)

# var rows: [[id, name, amount, op]]; op 'd' deletes the key
ACCOUNTS = """
{{ config(materialized='mutable_table', primary_key=['id'], delete_when="op = 'd'",
          changelog=true) }}
select id, name, amount, op from values
{% for id, name, amount, op in var('rows', []) %}
  ({{ id }}, '{{ name }}', {{ amount }}, '{{ op }}'){{ ',' if not loop.last }}
{% endfor %}
{% if not var('rows', []) %} (0, '', 0, '') {% endif %}
as t(id, name, amount, op)
{% if not var('rows', []) %} where false {% endif %}
"""

# a consumer: each run holds only the changelog events it has not read before
SEEN = """
{{ config(materialized='table') }}
select change_kind, id, table_version, event_offset
from {{ topic_events(ref('accounts')) }}
"""

HISTORY = """
{{ config(materialized='mutable_table', primary_key=['id'], history='scd2',
          changelog=true) }}
select * from values
{% for id, label, at in var('history_rows', []) %}
  ({{ id }}, '{{ label }}', {{ at }}L){{ ',' if not loop.last }}
{% endfor %}
as t(id, label, valid_from)
"""

# changelog turned on by var for an existing table
LATE = """
{{ config(materialized='mutable_table', primary_key=['id'], changelog=var('late_on', false)) }}
select * from values
{% for id, label in var('late_rows', [[1, 'a']]) %}
  ({{ id }}, '{{ label }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, label)
"""

# seen_ms relative to the run's clock: var ages = {id: age in minutes}
EXPIRING = """
{{ config(materialized='mutable_table', primary_key=['id'], ttl_column='seen_ms',
          ttl_ms=3600000, changelog=true) }}
select * from values
{% for id, age in var('ages', {}).items() %}
  ({{ id }}, unix_millis(current_timestamp()) - {{ age }} * 60000L){{ ',' if not loop.last }}
{% endfor %}
as t(id, seen_ms)
"""

# a topic model that took the name accounts_b's changelog would get
NAME_TAKEN = """
{{ config(materialized='topic', topic_name='accounts.b.changes') }}
select 1 as id
"""

ACCOUNTS_B = """
{{ config(materialized='mutable_table', primary_key=['id'], changelog=true) }}
select 1 as id
"""


def state(project, table="accounts"):
    """{(tenant, id): (name, amount)} of the stored table."""
    return {
        (r[0], r[1]): (r[2], r[3])
        for r in table_rows(project, table, "tenant_id, id, name, amount")
    }


def diff(before, after):
    """The changelog events two table states imply: (kind, id, new, previous)."""
    events = set()
    for key in before.keys() | after.keys():
        old, new = before.get(key), after.get(key)
        if old is None:
            events.add(("insert", key[1], new, None))
        elif new is None:
            events.add(("delete", key[1], None, old))
        elif old != new:
            events.add(("update", key[1], new, old))
    return events


def changelog_backing(project, table="accounts"):
    found = rows(
        project,
        f"select name, backing_table from {project.test_schema}.topics "
        f"where relation_name = '{table}'",
    )
    assert len(found) == 1, found
    return found[0]


def publishes(project, table="accounts"):
    """[(offset, table_version, events)] of the changelog, in offset order."""
    _, backing = changelog_backing(project, table)
    found = rows(
        project,
        f"select _offset, table_version, change_kind, id, name, amount, previous_name, "
        f"previous_amount, _row_idx from {project.test_schema}.{backing} order by 1, 9",
    )
    result = {}
    for offset, version, kind, id_, name, amount, prev_name, prev_amount, _ in found:
        new = None if kind == "delete" else (name, amount)
        old = None if kind == "insert" else (prev_name, prev_amount)
        result.setdefault((offset, version), set()).add((kind, id_, new, old))
    return [(o, v, e) for (o, v), e in sorted(result.items())]


def published_mark(project, table="accounts"):
    """The version the table records as published to its changelog (parquet / orc)."""
    found = rows(project, f"show tblproperties {project.test_schema}.{table}")
    return dict((r[0], r[1]) for r in found).get("jammi.changelog_published")


class TestChangelog(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "accounts.sql": ACCOUNTS,
            "seen.sql": SEEN,
            "history.sql": HISTORY,
            "late.sql": LATE,
            "expiring.sql": EXPIRING,
        }

    def test_events_are_the_diff_exactly_once_across_a_crash(self, project, fmt):
        run(project, "accounts", {"rows": [[1, "ann", 10, ""], [2, "bob", 20, ""]]})
        s1 = state(project)
        name, _ = changelog_backing(project)
        assert name == "accounts.changes"

        run(project, "accounts", {"rows": [[1, "ann", 15, ""], [2, "", 0, "d"], [3, "cy", 5, ""]]})
        s2 = state(project)

        # the run stops after its table commit, before the publish
        run(
            project,
            "accounts",
            {"rows": [[3, "cy", 6, ""], [4, "di", 1, ""]], "jammi_fail_at": "changelog"},
            expect_pass=False,
        )
        s3 = state(project)
        assert s3 != s2  # committed
        assert len(publishes(project)) == 2  # not published
        if fmt == "parquet":
            # the table still records version 2 as its last published: the next run's
            # repair reads the topic and publishes version 3
            assert (
                published_mark(project)
                == f"2@{project.test_schema}.{changelog_backing(project)[1]}"
            )

        # the next run publishes the stopped run's version first, then its own
        run(project, "accounts", {"rows": [[1, "", 0, "d"], [4, "dee", 1, ""]]})
        s4 = state(project)
        # a run that changes nothing publishes nothing
        if fmt == "parquet":
            assert (
                published_mark(project)
                == f"4@{project.test_schema}.{changelog_backing(project)[1]}"
            )
        result = run(project, "accounts", {"rows": [[4, "dee", 1, ""]]})
        assert result.results[0].message == "INSERT 0, UPDATE 0, DELETE 0"

        published = publishes(project)
        assert [p[2] for p in published] == [
            diff({}, s1),
            diff(s1, s2),
            diff(s2, s3),
            diff(s3, s4),
        ]
        offsets = [p[0] for p in published]
        versions = [p[1] for p in published]
        assert offsets == sorted(set(offsets)) and versions == sorted(set(versions))
        if fmt in ("parquet", "iceberg"):
            # iceberg numbers the versions that changed rows (rules/changelog_iceberg.py)
            assert versions == offsets == [1, 2, 3, 4]
        else:
            assert offsets == [v + 1 for v in versions]
        if fmt == "iceberg":
            # one record per committed version: the first tagged by the CREATE's run id,
            # the others by the snapshots their branches fast-forwarded to main
            records = rows(
                project,
                f"select tag, _offset from {project.test_schema}.accounts__jammi_changelog "
                f"where tag in (select cast(snapshot_id as string) from "
                f"{project.test_schema}.accounts.history where is_current_ancestor) "
                f"or tag like 'create_%' order by 2",
            )
            assert [r[1] for r in records] == [1, 2, 3, 4]
            assert records[0][0].startswith("create_")

        # one row index per event, from 0, per publish
        _, backing = changelog_backing(project)
        per_offset = rows(
            project,
            f"select _offset, count(*), min(_row_idx), max(_row_idx), "
            f"count(distinct _produced_at) from {project.test_schema}.{backing} group by 1",
        )
        assert all(r[2] == 0 and r[3] == r[1] - 1 and r[4] == 1 for r in per_offset)

        # a consumer reads every event once: the first run all, the second only new ones
        run(project, "seen")
        assert len(table_rows(project, "seen")) == sum(len(p[2]) for p in published)
        run(project, "accounts", {"rows": [[5, "ed", 3, ""]]})
        run(project, "seen")
        assert table_rows(project, "seen", "change_kind, id") == [("insert", 5)]

    # connection_agnostic: the event diff is planner SQL; the crash and expire tests run over Thrift
    @pytest.mark.connection_agnostic
    @pytest.mark.smoke
    def test_scd2_opens_and_closes(self, project):
        run(project, "history", {"history_rows": [[1, "a", 100], [2, "x", 100]]})
        run(project, "history", {"history_rows": [[1, "b", 200]]})
        _, backing = changelog_backing(project, "history")
        found = rows(
            project,
            f"select _offset, change_kind, id, label, valid_from, valid_to, previous_valid_to "
            f"from {project.test_schema}.{backing} order by 1, 2, 3, 5",
        )
        first, second = sorted({r[0] for r in found})
        assert [r[1:] for r in found if r[0] == first] == [
            ("open", 1, "a", 100, None, None),
            ("open", 2, "x", 100, None, None),
        ]
        assert [r[1:] for r in found if r[0] == second] == [
            ("close", 1, "a", 100, 200, None),
            ("open", 1, "b", 200, None, None),
        ]

    def test_expire_operation_publishes_what_it_expires(self, project):
        run(project, "expiring", {"ages": {1: 10, 2: 50}})
        args = json.dumps({"table": "expiring", "ttl_ms": 30 * 60_000})
        run_dbt(["run-operation", "expire_mutable_table", "--args", args])
        _, backing = changelog_backing(project, "expiring")
        found = rows(
            project,
            f"select _offset, change_kind, id, seen_ms is null, previous_seen_ms is null "
            f"from {project.test_schema}.{backing} order by 1, 3",
        )
        first, second = sorted({r[0] for r in found})
        assert [r[1:] for r in found] == [
            ("insert", 1, False, True),
            ("insert", 2, False, True),
            ("delete", 2, True, False),
        ]
        assert [r[0] for r in found] == [first, first, second]

    # connection_agnostic: the event diff is planner SQL; the crash and expire tests run over Thrift
    @pytest.mark.connection_agnostic
    def test_turned_on_later_publishes_from_the_next_version(self, project):
        run(project, "late", {"late_rows": [[1, "a"]]})
        run(project, "late", {"late_rows": [[1, "b"]]})
        assert not rows(
            project,
            f"select 1 from {project.test_schema}.topics where relation_name = 'late'",
        )
        run(project, "late", {"late_on": True, "late_rows": [[1, "c"], [2, "z"]]})
        assert "jammi.changelog_since" in properties(project, "late")
        _, backing = changelog_backing(project, "late")
        assert rows(
            project,
            f"select change_kind, id, label, previous_label from {project.test_schema}.{backing} "
            "order by 2",
        ) == [("update", 1, "c", "b"), ("insert", 2, "z", None)]
        # turned off, the table forgets where its changelog started
        run(project, "late", {"late_rows": [[1, "d"]]})
        assert "jammi.changelog_since" not in properties(project, "late")

        # dropped by hand and created anew: its versions would collide with the offsets
        # of the old table's changelog, so the run is refused and creates nothing
        project.run_sql(f"drop table {project.test_schema}.late")
        result = run(project, "late", {"late_on": True}, expect_pass=False)
        assert "holds 2 event(s) of an earlier table" in result.results[0].message
        assert not table_exists(project, "late")
        assert "late__jammi_batch" not in session_views(project)


# connection_agnostic: refused in Python before any SQL
@pytest.mark.connection_agnostic
class TestChangelogRefused(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "name_taken.sql": NAME_TAKEN,
            "accounts_b.sql": ACCOUNTS_B,
        }

    def test_a_taken_topic_name_is_refused_without_a_trace(self, project):
        run(project, "name_taken")
        result = run(project, "accounts_b", expect_pass=False)
        message = result.results[0].message
        assert "changelog topic name 'accounts.b.changes' is already used by model" in message
        assert "Fix:" in message
        assert not table_exists(project, "accounts_b")
        assert "accounts_b__jammi_batch" not in session_views(project)
