"""SQL predicates spliced into generated SQL (delete_when; reusable for where= options):
one boolean expression, parsed with a real SQL parser, no subqueries."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.predicates import validate_predicate
from dbt.adapters.jammi.mutable_table.definition import (
    MutableTableDefinitionBuilder,
    MutableTableId,
)

SCHEMA = {"id": "bigint", "op": "string", "deleted": "boolean", "tags": "string"}


def delete_when(predicate):
    return (
        MutableTableDefinitionBuilder(MutableTableId("orders"), SCHEMA)
        .primary_key(["id"])
        .delete_when(predicate)
        .build()
    )


def rejects(predicate, *fragments):
    with pytest.raises(JammiValidationError) as info:
        delete_when(predicate)
    message = str(info.value)
    assert "mutable_table 'orders'" in message
    assert "'delete_when'" in message
    assert "Fix:" in message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


@pytest.mark.parametrize(
    "predicate",
    [
        "deleted",
        "op = 'd'",
        "op = ';'",  # a ';' inside a string literal is text
        'op = "x;y"',  # Spark's double-quoted string literal
        "op = 'it\\'s; fine'",
        "op like '%--%'",
        "op = '/* not a comment */'",
        "coalesce(deleted, false) and op in ('d', 'x')",
        "(op = 'd') or (deleted is true)",
        "id <=> 3",
        "op rlike '^d'",
        "case when op = 'd' then true else false end",
        "exists(array(1, 2), x -> x > id)",  # a higher-order function, not a subquery
    ],
)
def test_accepts_one_boolean_expression(predicate):
    assert delete_when(predicate).delete_when == predicate


@pytest.mark.parametrize(
    "predicate",
    ["false) or (true", "(op = 'd'", "op = 'd')", "deleted) and (not deleted", "op = 'd', 1"],
)
def test_rejects_unbalanced_or_several_expressions(predicate):
    rejects(predicate, "not one SQL expression")


def test_rejects_statement_separators_and_comments():
    rejects("1=1; drop table x", "';'", "single boolean expression")
    rejects("deleted;", "';'")
    rejects("op = 'd' -- x", "comment")
    rejects("op = 'd' /* x */", "comment")


@pytest.mark.parametrize(
    "predicate",
    [
        "id in (select id from other_tenant.orders)",
        "exists (select 1 from orders where tenant_id = 'globex')",
        "(select count(*) from orders) > 0",
    ],
)
def test_rejects_subqueries(predicate):
    rejects(predicate, "subquery")


def test_rejects_statements_and_jvm_calls():
    rejects("select 1", "one boolean expression")
    rejects("deleted union select true", "one boolean expression")
    rejects("java_method('java.lang.System', 'exit', 1) = 1", "java_method()")
    rejects("op = 'unterminated", "not valid SQL")
    rejects("   ", "SQL predicate string")


def test_reusable_for_other_options():
    assert validate_predicate("op = 'd'", "topic_events in model 'm'", "where") == "op = 'd'"
    with pytest.raises(JammiValidationError) as info:
        validate_predicate("op = 'd') or (true", "topic_events in model 'm'", "where")
    assert "topic_events in model 'm': 'where' is not one SQL expression" in str(info.value)
