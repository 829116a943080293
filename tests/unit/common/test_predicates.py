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
from tests.unit.rejections import rejects

SCHEMA = {"id": "bigint", "op": "string", "deleted": "boolean", "tags": "string"}


# every refusal names the model and the option
DELETE_WHEN = ("mutable_table 'orders'", "'delete_when'")


def delete_when(predicate):
    return (
        MutableTableDefinitionBuilder(MutableTableId("orders"), SCHEMA)
        .primary_key(["id"])
        .delete_when(predicate)
        .build()
    )


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
    rejects(lambda: delete_when(predicate), *DELETE_WHEN, "not one SQL expression")


def test_rejects_statement_separators_and_comments():
    rejects(
        lambda: delete_when("1=1; drop table x"), *DELETE_WHEN, "';'", "single boolean expression"
    )
    rejects(lambda: delete_when("deleted;"), *DELETE_WHEN, "';'")
    rejects(lambda: delete_when("op = 'd' -- x"), *DELETE_WHEN, "comment")
    rejects(lambda: delete_when("op = 'd' /* x */"), *DELETE_WHEN, "comment")


@pytest.mark.parametrize(
    "predicate",
    [
        "id in (select id from other_tenant.orders)",
        "exists (select 1 from orders where tenant_id = 'globex')",
        "(select count(*) from orders) > 0",
    ],
)
def test_rejects_subqueries(predicate):
    rejects(lambda: delete_when(predicate), *DELETE_WHEN, "subquery")


def test_rejects_statements_and_jvm_calls():
    rejects(lambda: delete_when("select 1"), *DELETE_WHEN, "one boolean expression")
    rejects(
        lambda: delete_when("deleted union select true"), *DELETE_WHEN, "one boolean expression"
    )
    rejects(
        lambda: delete_when("java_method('java.lang.System', 'exit', 1) = 1"),
        *DELETE_WHEN,
        "java_method()",
    )
    rejects(lambda: delete_when("op = 'unterminated"), *DELETE_WHEN, "not valid SQL")
    rejects(lambda: delete_when("   "), *DELETE_WHEN, "SQL predicate string")


def test_reusable_for_other_options():
    assert validate_predicate("op = 'd'", "topic_events in model 'm'", "where") == "op = 'd'"
    with pytest.raises(JammiValidationError) as info:
        validate_predicate("op = 'd') or (true", "topic_events in model 'm'", "where")
    assert "topic_events in model 'm': 'where' is not one SQL expression" in str(info.value)
