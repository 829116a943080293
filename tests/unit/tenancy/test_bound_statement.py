"""One statement of a bound run through tenancy/bound_statement.py, end to end, over a
fake remote connection (EXPLAIN answered with the texts Spark 3.5 + Delta 3.2 printed):
analyze, decide, rewrite, verify, and the module entries of that walk; no Spark here."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.tenancy import bound_statement
from dbt.adapters.jammi.tenancy.bound_statement import scoped_statement, subject_of
from dbt.adapters.jammi.tenancy.guard import TenantGuard, TenantReadError
from tests.unit.tenancy.test_merge_operands import (
    LEAK,
    MERGE_PRINT,
    PRICES,
    SCOPED,
    SCOPED_PRICES,
    SINK,
)

PACKAGE = Path(bound_statement.__file__).resolve().parents[1]


class Cursor:
    """Answers EXPLAIN EXTENDED and SHOW TBLPROPERTIES; d.prices is tenant-scoped."""

    def __init__(self, asked: list[str], broken: bool = False) -> None:
        self.asked, self.broken, self.rows = asked, broken, []

    def execute(self, sql, bindings=None):
        self.asked.append(sql)
        if sql.startswith("show tblproperties"):
            self.rows = [("jammi.definition", "7b7d")] if "prices" in sql else []
            return
        body = sql[len("explain extended ") :]
        if self.broken:
            raise RuntimeError("[PARSE_SYNTAX_ERROR] Syntax error at or near 'frm'")
        if body.startswith("merge"):
            text = MERGE_PRINT
        elif "d.sink" in body:
            text = SINK
        elif "where (tenant_id" in body:
            text = SCOPED_PRICES
        else:
            text = PRICES
        self.rows = [(text,)]

    def fetchall(self):
        return self.rows


def remote(asked: list[str], broken: bool = False):
    return SimpleNamespace(
        name="model.p.leak",
        credentials=SimpleNamespace(is_session=False),
        handle=SimpleNamespace(cursor=lambda: Cursor(asked, broken)),
    )


def test_an_unscoped_merge_is_scoped_in_its_own_text_and_verified():
    asked: list[str] = []
    guard = TenantGuard(lambda: "acme")
    assert scoped_statement(guard, remote(asked), LEAK) == SCOPED
    assert guard.statements_scoped == 1 and guard.statements_checked == 2
    assert guard.table_lookups == 1  # d.prices, once (d.sink has no tenant_id column)
    assert [sql.split(" ")[2] for sql in asked if sql.startswith("explain")] == [
        "merge",  # analyze: the MERGE, then its two operands
        "select",
        "select",
        "merge",  # verify: the rewritten MERGE, then its two operands
        "select",
        "select",
    ]


def test_a_scoped_statement_runs_as_it_is():
    guard = TenantGuard(lambda: "acme")
    assert scoped_statement(guard, remote([]), SCOPED) == SCOPED
    assert guard.statements_scoped == 0 and guard.statements_checked == 1


def test_a_statement_with_bindings_is_checked_and_never_rewritten():
    with pytest.raises(TenantReadError, match=r"model 'leak' reads d\.prices without"):
        sql = "select * from d.prices s where s.sku = %s"
        scoped_statement(TenantGuard(lambda: "acme"), remote([]), sql, bindings=["a"])


def test_a_statement_spark_cannot_analyze_fails_with_its_reason():
    with pytest.raises(TenantReadError, match="could not analyze this one: .PARSE_SYNTAX"):
        scoped_statement(TenantGuard(lambda: "acme"), remote([], broken=True), "select frm")


def test_unbound_or_trusted_statements_are_not_analyzed():
    asked: list[str] = []
    assert scoped_statement(TenantGuard(lambda: None), remote(asked), LEAK) == LEAK
    guard = TenantGuard(lambda: "acme")
    with guard.trusted():
        assert scoped_statement(guard, remote(asked), LEAK) == LEAK
    assert asked == []


def test_subject_of_a_connection():
    assert subject_of("model.project.orders") == "model 'orders'"
    assert subject_of("run_operation.p.undo") == "run operation 'undo'"
    assert subject_of(None) == "a statement"


def module_entries(call) -> list[str]:
    """The package modules ``call()`` enters, in order: each call of a function whose
    module is not its caller's."""

    def module_of(code) -> str | None:
        path = Path(code.co_filename).resolve()
        return str(path.relative_to(PACKAGE)) if path.is_relative_to(PACKAGE) else None

    entries: list[str] = []

    def profile(frame, event, arg):
        if event == "call":
            callee = module_of(frame.f_code)
            if callee and callee != (module_of(frame.f_back.f_code) if frame.f_back else None):
                entries.append(callee)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return entries


def test_the_owner_is_entered_once_and_runs_the_stages_in_order():
    """The decision has one owner that nothing calls back into; each stage's module is
    entered in pipeline order: analyze, decide, rewrite, verify (analyze + decide)."""
    guard = TenantGuard(lambda: "acme")
    entries = module_entries(lambda: scoped_statement(guard, remote([]), LEAK))
    assert entries.count("tenancy/bound_statement.py") == 1
    stages = {
        "tenancy/statement_plans.py": "analyze",
        "tenancy/guard.py": "decide",
        "tenancy/scope_references.py": "rewrite",
    }
    walked = [stages[m] for m in entries if m in stages]
    collapsed = [s for i, s in enumerate(walked) if i == 0 or walked[i - 1] != s]
    # guard.needs_check first; a table lookup (statement_plans) inside each decision
    assert collapsed == [
        "decide",
        "analyze",
        "decide",
        "analyze",
        "rewrite",
        "analyze",
        "decide",
    ]
