"""The run's start (mutable_table/run_start.py), without Spark: the steps' SQL and
decisions that adapter.mutable_run_start runs before anything is written."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.mutable_table import run_start
from dbt.adapters.jammi.mutable_table.apply_service import MutableApplyService
from dbt.adapters.jammi.mutable_table.commit.commit_service import CommitService
from dbt.adapters.jammi.mutable_table.commit.run_plan import plan_run
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.rules import ttl
from dbt.adapters.jammi.mutable_table.rules.rules_service import RulesService
from dbt.adapters.jammi.mutable_table.run_errors import MutableRunError
from dbt.adapters.jammi.mutable_table.run_service import MutableRunService
from dbt.adapters.jammi.mutable_table.table_properties import RECORDED_KEYS, recorded_definition
from dbt.adapters.jammi.mutable_table.table_state import TableStateService


def test_the_failure_phase_is_one_the_run_knows():
    assert run_start.failure_phase(None) is None
    assert run_start.failure_phase("") is None
    assert run_start.failure_phase("write") == "write"
    with pytest.raises(MutableRunError, match="jammi_fail_at='nowhere' is not one of"):
        run_start.failure_phase("nowhere")


def test_the_batch_is_the_model_sql_as_a_from_item_without_its_semicolon():
    assert run_start.batch_source("  select 1 as id ;  ") == "(\nselect 1 as id\n)"
    assert run_start.batch_source("select 1 as id") == "(\nselect 1 as id\n)"


def test_an_unbound_run_or_a_model_without_tenant_from_reads_the_batch_as_is():
    assert run_start.tenant_bound_source({"tenant_from": "org"}, "(b)", None) == ("(b)", None)
    assert run_start.tenant_bound_source({"tenant_from": None}, "(b)", "acme") == ("(b)", None)


def test_a_bound_run_of_a_tenant_from_model_takes_its_own_rows_and_counts_the_rest():
    source, skipped = run_start.tenant_bound_source({"tenant_from": "org id"}, "(b)", "o'brien")
    assert source == "(select * from (b) as batch where `org id` = 'o\\'brien')"
    assert skipped == (
        "select count(*) from (b) as batch where not coalesce(`org id` = 'o\\'brien', false)"
    )


def test_the_skipped_rows_message_names_the_model_the_tenant_and_the_column():
    message = run_start.skipped_rows_message("orders", "acme", "org", 3)
    assert "mutable_table 'orders'" in message
    assert "tenant 'acme'" in message
    assert "skipped 3 row(s) whose org" in message


def test_schema_evolution_widens_then_adds_fields_then_drops():
    reconciled = {
        "widened": [["qty", "int", "bigint"]],
        "added_fields": [["addr", "zip", "string"]],
        "dropped": ["old", "older"],
    }
    assert run_start.evolution_statements("s.t", reconciled) == [
        "alter table s.t alter column `qty` type bigint",
        "alter table s.t add columns (`addr`.`zip` string)",
        "alter table s.t drop columns (`old`, `older`)",
    ]
    assert (
        run_start.evolution_statements("s.t", {"widened": [], "added_fields": [], "dropped": []})
        == []
    )


def test_what_the_run_writes_first_moves_the_checks_into_their_own_query():
    definition = {"primary_key": ["id"], "indexes": []}
    quiet = run_start.writes_first(False, False, [], [], {}, {"writes": False})
    assert not any(quiet.values())
    assert plan_run(definition, "delta", True, quiet).checks == "in_merge"
    evolving = run_start.writes_first(False, False, [], ["alter table ..."], {}, {"writes": False})
    assert evolving["schema_evolution"] is True
    plan = plan_run(definition, "delta", True, evolving)
    assert plan.checks == "separate" and plan.writes_first == ("schema_evolution",)
    changelog = run_start.writes_first(
        False, False, [["c", "int"]], [], {"k": "v"}, {"writes": True}
    )
    assert {name for name, writes in changelog.items() if writes} == {
        "new_columns",
        "new_properties",
        "changelog",
    }


def test_the_collapsed_count_subtracts_the_collapsed_batch_from_the_delivered_one():
    assert run_start.collapsed_count_sql("(b)", "(c)") == (
        "select (select count(*) from (b) as delivered) - (select count(*) from (c) as collapsed)"
    )


def test_the_start_handed_to_jinja_is_frozen_and_read_by_attribute():
    start = run_start.RunStart(
        fail_at=None,
        run_id="r1",
        rebuild=False,
        full_refresh_ignored=False,
        batch_columns=[["id", "bigint"]],
        definition={"table_id": "t", "columns": [["id", "bigint"]]},
        state=None,
        adopting=False,
        file_format="delta",
        new_columns=[],
        evolution=[],
        new_properties={},
        changelog={"topic": None, "writes": False},
        batch_source="(b)",
        redelivery={"always": False},
        collapsed=None,
        truncates=None,
        plan=plan_run({"primary_key": ["id"]}, "delta", False, {}),
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        start.run_id = "r2"  # type: ignore[misc]
    assert start.plan.path == "create" and start.run_id == "r1"


def test_a_plan_names_the_findings_after_which_identical_rows_collapse():
    plan = plan_run({"primary_key": ["id"]}, "parquet", True, {})
    assert plan.collapse_on == ("duplicate_key", "duplicate_version")


def run_service(sql=None, rules=None, versions=None) -> MutableRunService:
    """The run's service over the fakes a test gives (the others unused: None)."""
    return MutableRunService(sql, None, None, None, rules, versions, None)  # type: ignore[arg-type]


class _Attempt:
    """The row rules' service as the run's preparation calls it, recorded instead of run;
    ``run``: the run's service over it."""

    def __init__(self) -> None:
        self.calls: list = []
        self.run = run_service(rules=self)

    def changelog_repair(self, definition, relation, state):
        self.calls.append(("repair", relation))
        return ""

    def tombstones_prepare(self, definition, relation, state, file_format):
        self.calls.append(("tombstones", definition["now_ms"] > 0))
        return {"tombstones_from": "select * from live", "tombstone_now_ms": 5}

    def identity_prepare(self, definition, plan_target, state, file_format):
        self.calls.append(("identity", plan_target))
        return {"identity_from": 7, "identity_guard": plan_target is not None}

    def changelog_prepare(self, definition, relation, state, file_format, checked=None):
        self.calls.append(("changelog", checked))
        return {"backing": "s.__topic_1", "since": 3}


@pytest.mark.parametrize("state", [None, {"location": "file:/w/t/v0000000003_r"}])
def test_each_attempt_plans_with_a_copy_holding_its_values(state):
    definition = {"table_id": "t", "primary_key": ["id"], "ttl_ms": 60_000, "history": "none"}
    kept = dict(definition)
    adapter = _Attempt()
    attempt = adapter.run.plan_prepare(definition, "s.t", state, "delta")
    assert definition == kept
    # the changelog is repaired before anything is planned; the tombstones and the
    # identity column's start read the table, which a first run (no state) plans without
    assert adapter.calls == [
        ("repair", "s.t"),
        ("tombstones", True),
        ("identity", None if state is None else "s.t"),
    ]
    assert attempt["ttl_expired_in_plan"] is True and attempt["now_ms"] > 0
    assert attempt["identity_from"] == 7 and attempt["tombstone_now_ms"] == 5
    added = set(attempt) - set(definition)
    assert added == {
        "now_ms",
        "ttl_expired_in_plan",
        "tombstones_from",
        "tombstone_now_ms",
        "identity_from",
        "identity_guard",
    }
    assert added.isdisjoint(RECORDED_KEYS)


def test_the_changelog_topic_comes_on_a_copy():
    definition = {"table_id": "t", "changelog": True}
    prepared = _Attempt().run.changelog_prepare(definition, "s.t", None, "parquet")
    assert prepared == {**definition, "changelog_topic": {"backing": "s.__topic_1", "since": 3}}
    assert "changelog_topic" not in definition and "changelog_topic" not in RECORDED_KEYS


@pytest.mark.parametrize(
    "config, in_plan",
    [
        ({"ttl_ms": 1}, True),
        ({"ttl_ms": 1, "history": "scd2"}, False),
        ({"ttl_ms": 1, "merge_functions": {"n": "sum"}, "version_column": "v"}, False),
        (
            {"ttl_ms": 1, "merge_functions": {"n": "sum"}, "version_column": "v"}
            | {"hard_deletes": "delete"},
            True,
        ),
        ({"ttl_ms": 1, "merge_functions": {"n": "sum"}}, True),
        ({}, False),
    ],
)
def test_the_history_none_planner_finds_the_expired_rows_unless_merge_functions_combine(
    config, in_plan
):
    assert ttl.expired_in_plan(config) is in_plan


class _ChecksSql:
    """The batch failure's queries answered from a dict, the statements recorded."""

    def __init__(self, answers: dict) -> None:
        self.answers = answers
        self.ran: list = []

    def _table(self, sql: str):
        rows = self.answers.get(sql, [])
        return SimpleNamespace(rows=rows, column_names=["id"])

    def execute(self, sql, fetch=False):
        self.ran.append(("planned", sql))
        return None, self._table(sql)

    def without_constraint_propagation(self, sql):
        self.ran.append(("unplanned", sql))
        return self._table(sql)

    def trusted(self, sql):
        self.ran.append(("cleanup", sql))


def _Checks(answers: dict) -> TableStateService:  # noqa: N802 - the service over answers
    service = TableStateService(_ChecksSql(answers), None, None)  # type: ignore[arg-type]
    service.ran = service.sql.ran  # type: ignore[attr-defined]
    return service


def test_a_batch_failure_names_the_first_check_with_samples():
    checks = [
        {"kind": "null_key", "sql": "nulls"},
        {"kind": "null_version", "sql": "versions", "detail": "'v'"},
        {"kind": "duplicate_version", "sql": "dups", "detail": "'v'"},
    ]
    adapter = _Checks({"versions": [[7]], "dups": [[8]]})
    with pytest.raises(MutableRunError, match="NULL version_column 'v'"):
        adapter.batch_failure("m", checks, "duplicate_version")
    # the first check found nothing, the second failed the run: the third never ran
    assert adapter.ran == [("planned", "nulls"), ("planned", "versions")]
    # nothing found (the output changed between two reads): the kind alone
    quiet = _Checks({})
    with pytest.raises(MutableRunError, match="several rows for the same key"):
        quiet.batch_failure("m", checks[:1] + checks[2:], "duplicate_key")


def test_unique_index_checks_pass_or_clean_up_before_failing():
    checks = [
        {"kind": "unique_index", "sql": "a", "detail": "'by_a' (a)", "unplanned": True},
        {"kind": "unique_index", "sql": "b", "detail": "'by_b' (b)", "unplanned": True},
    ]
    adapter = _Checks({})
    assert adapter.batch_failure("m", checks, None, ["drop view v"]) == ""
    assert adapter.ran == [("unplanned", "a"), ("unplanned", "b")]
    failing = _Checks({"b": [[1]]})
    with pytest.raises(MutableRunError, match="unique index 'by_b' \\(b\\)"):
        failing.batch_failure("m", checks, None, ["drop view v"])
    assert failing.ran[-1] == ("cleanup", "drop view v")


class _Publish:
    """A SQL interface that records what runs, and the row rules' service over it."""

    def __init__(self) -> None:
        self.ran: list = []
        self.sql = SimpleNamespace(rows=self._run_sql, trusted=self._execute_trusted)
        self._rules = RulesService(self.sql, None, None)  # type: ignore[arg-type]

    def _execute_trusted(self, sql):
        self.ran.append(sql)

    def _run_sql(self, sql):
        self.ran.append(sql)
        if "raise_error" in sql:
            raise RuntimeError(sql)
        return []


def test_the_changelog_hook_stops_the_run_after_dropping_its_relations():
    adapter = _Publish()
    # no changelog: nothing runs, the hook included
    assert adapter._rules.changelog_publish({}, "s.t", None, "changelog", ["drop view v"]) == ""
    assert adapter.ran == []
    with pytest.raises(RuntimeError, match="jammi_fail_at=changelog"):
        adapter._rules.changelog_publish(
            {"changelog_topic": {"backing": "s.b"}}, "s.t", None, "changelog", ["drop view v"]
        )
    assert adapter.ran[0] == "drop view v" and "jammi_fail_at=changelog" in adapter.ran[1]


class _Record(_Publish):
    def __init__(self) -> None:
        super().__init__()
        # the kept versions' service: its sweep
        versions = SimpleNamespace(sweep=lambda *args: self.ran.append("sweep"))
        self.run = run_service(self.sql, self._rules, versions)


def test_a_run_that_published_its_version_records_it_with_its_properties():
    defn = MutableTableDefinition.from_config(
        "accounts", {"id": "bigint", "name": "string"}, {"primary_key": ["id"], "changelog": True}
    ).to_dict()
    stored = {"definition": recorded_definition(defn), "location": "file:/w/a/v0000000007_r"}
    run = dict(
        defn,
        changelog_topic={
            "backing": "s.b",
            "file_format": "parquet",
            "table_format": "parquet",
            "since": 1,
        },
    )
    adapter = _Record()
    committed = "file:/w/a/v0000000008_r"
    adapter.run.record_definition(run, stored, "s.a", "parquet", committed, None, "i")
    assert "'jammi.version' = '8'" in adapter.ran[0]
    assert "'jammi.changelog_published' = '8@s.b'" in adapter.ran[0]
    # an expiry records the stored definition, which names no topic: no mark
    expiry = _Record()
    expiry.run.record_definition(defn, stored, "s.a", "parquet", committed, None, "i")
    assert "changelog_published" not in expiry.ran[0]


class _Stage:
    """The commit paths' and the steps' services and a SQL interface, recorded here;
    ``apply``: the commits' service over them."""

    def __init__(self, stopped_by: str = "") -> None:
        self.ran: list = []
        self.stopped_by = stopped_by
        sql = SimpleNamespace(rows=self._run_sql, trusted=self._execute_trusted)
        self.apply = MutableApplyService(sql, None, self, self, None, None)  # type: ignore[arg-type]

    def holder_properties(self):
        return {"jammi.holder": "h"}

    def run_checked(self, sql):
        return CommitService.run_checked(self._recorded(), sql)  # type: ignore[arg-type]

    def change_counts(self, change_set):
        return CommitService.change_counts(self._recorded(), change_set)  # type: ignore[arg-type]

    def _recorded(self):
        return SimpleNamespace(sql=SimpleNamespace(rows=self._run_sql))

    def _execute_trusted(self, sql):
        self.ran.append(sql)

    def _run_sql(self, sql):
        self.ran.append(sql)
        if sql.startswith("create table") and self.stopped_by:
            raise RuntimeError(f"[USER_RAISED_EXCEPTION] jammi-batch-check:{self.stopped_by}")
        if sql.startswith("select _change"):
            return [("insert", 2), ("delete", 1)]
        if sql.startswith("describe schema"):
            return [("Location", "file:/w/s")]
        return []

    def drop_abandoned_leftovers(self, target, location, run_id):
        self.ran.append(("leftovers", target, location, run_id))

    def remove_empty_dir(self, path):
        self.ran.append(("rmdir", path))


class _Named(SimpleNamespace):
    def __str__(self) -> str:
        return self.identifier if self.type == "view" else f"s.{self.identifier}"


def test_a_merge_stages_a_view_and_a_rewrite_a_stamped_table_then_the_leftovers():
    view = _Named(schema="s", identifier="t__jammi_change_set", type="view")
    adapter = _Stage()
    staged = adapter.apply.stage_change_set(view, "select 1", False, True)
    assert staged["rejected"] is None and staged["counts"]["total"] == 3
    assert adapter.ran[0] == "create or replace temporary view t__jammi_change_set as\n  select 1"
    table = _Named(schema="s", identifier="t__jammi_changes_r2", type="table")
    adapter = _Stage()
    leftovers = {"target": "s.t", "location": "file:/w/t/v1_r1", "run_id": "r2"}
    staged = adapter.apply.stage_change_set(table, "select 1", True, False, leftovers)
    assert staged == {"rejected": None, "counts": None}
    # an earlier attempt's table replaced, the new one stamped, then the leftovers
    assert adapter.ran[0] == "drop table if exists s.t__jammi_changes_r2"
    assert "'jammi.holder' = 'h'" in adapter.ran[1]
    assert adapter.ran[2] == ("leftovers", "s.t", "file:/w/t/v1_r1", "r2")


def test_a_batch_check_that_stops_the_staging_leaves_no_directory():
    table = _Named(schema="s", identifier="t__jammi_changes_r2", type="table")
    adapter = _Stage(stopped_by="duplicate_key")
    staged = adapter.apply.stage_change_set(
        table, "select 1", False, True, {"target": "s.t", "run_id": "r2"}
    )
    assert staged == {"rejected": "duplicate_key", "counts": None}
    assert adapter.ran[-1] == ("rmdir", "file:/w/s/t__jammi_changes_r2")
    assert not any(isinstance(step, tuple) and step[0] == "leftovers" for step in adapter.ran)
