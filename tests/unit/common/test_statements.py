"""Planning a change-set query without Spark's constraint propagation: the session's
own setting is put back, also when the query fails; no Spark here."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.common.statements import CONSTRAINT_PROPAGATION, StatementsMixin


class FakeAdapter(StatementsMixin):
    def __init__(self, setting: str, fail: bool = False) -> None:
        self.setting, self.fail, self.seen = setting, fail, []

    def execute(self, sql: str, fetch: bool = False):
        self.seen.append((sql, self.setting))
        if sql == f"set {CONSTRAINT_PROPAGATION}":
            return None, SimpleNamespace(rows=[(CONSTRAINT_PROPAGATION, self.setting)])
        if sql.startswith(f"set {CONSTRAINT_PROPAGATION}="):
            self.setting = sql.split("=", 1)[1]
            return None, SimpleNamespace(rows=[])
        if self.fail:
            raise RuntimeError("the query failed")
        return None, SimpleNamespace(rows=[("row",)])


def test_the_query_is_planned_without_it_and_the_setting_is_restored():
    adapter = FakeAdapter("true")
    assert adapter._run_query_without_constraint_propagation("select 1").rows == [("row",)]
    assert ("select 1", "false") in adapter.seen
    assert adapter.setting == "true"


def test_the_setting_is_restored_when_the_query_fails():
    adapter = FakeAdapter("true", fail=True)
    with pytest.raises(RuntimeError):
        adapter._run_query_without_constraint_propagation("select 1")
    assert adapter.setting == "true"


def test_a_session_that_has_it_off_is_left_alone():
    adapter = FakeAdapter("false")
    adapter._run_query_without_constraint_propagation("select 1")
    assert [sql for sql, _ in adapter.seen] == [f"set {CONSTRAINT_PROPAGATION}", "select 1"]
