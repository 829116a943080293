"""The SQL interface services are given (common/sql_session.py), over a recorded
execute: a change-set query planned without Spark's constraint propagation (the
session's own setting put back, also when the query fails), the adapter's own
statements run trusted, and the server's Spark version asked once per connection."""

from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.common.sql_session import CONSTRAINT_PROPAGATION, SqlSession


class Server:
    def __init__(self, setting: str, fail: bool = False) -> None:
        self.setting, self.fail, self.seen = setting, fail, []
        self.trusting = False

    def execute(self, sql: str, fetch: bool = False):
        self.seen.append((sql, self.setting, self.trusting))
        if sql == f"set {CONSTRAINT_PROPAGATION}":
            return None, SimpleNamespace(rows=[(CONSTRAINT_PROPAGATION, self.setting)])
        if sql.startswith(f"set {CONSTRAINT_PROPAGATION}="):
            self.setting = sql.split("=", 1)[1]
            return None, SimpleNamespace(rows=[])
        if self.fail:
            raise RuntimeError("the query failed")
        if sql == "select version()":
            return None, SimpleNamespace(rows=[("4.1.1 abc",)])
        return None, SimpleNamespace(rows=[("row",)])


class Connections:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.handle = SimpleNamespace()

    @contextmanager
    def trusted_statements(self):
        self.server.trusting = True
        try:
            yield
        finally:
            self.server.trusting = False

    def get_thread_connection(self):
        return SimpleNamespace(handle=self.handle, name="model.orders")


def session(server: Server, method: str = "thrift") -> SqlSession:
    credentials = SimpleNamespace(is_session=method == "session")
    return SqlSession(server.execute, Connections(server), credentials)


def test_the_query_is_planned_without_it_and_the_setting_is_restored():
    server = Server("true")
    assert session(server).without_constraint_propagation("select 1").rows == [("row",)]
    assert ("select 1", "false", False) in server.seen
    assert server.setting == "true"


def test_the_setting_is_restored_when_the_query_fails():
    server = Server("true", fail=True)
    with pytest.raises(RuntimeError):
        session(server).without_constraint_propagation("select 1")
    assert server.setting == "true"


def test_a_session_that_has_it_off_is_left_alone():
    server = Server("false")
    session(server).without_constraint_propagation("select 1")
    assert [sql for sql, _, _ in server.seen] == [f"set {CONSTRAINT_PROPAGATION}", "select 1"]


def test_the_adapters_own_statements_run_trusted_and_a_models_do_not():
    server = Server("true")
    sql = session(server)
    assert sql.rows("select 2") == [("row",)]
    sql.execute("select 3")
    assert [(s, trusted) for s, _, trusted in server.seen] == [
        ("select 2", True),
        ("select 3", False),
    ]


def test_the_servers_spark_version_is_asked_once_per_connection():
    server = Server("true")
    sql = session(server)
    assert sql.spark_version() == "4.1.1 abc" and sql.spark_version() == "4.1.1 abc"
    assert [s for s, _, _ in server.seen] == ["select version()"]
    assert not sql.local_filesystem and session(server, "session").local_filesystem
