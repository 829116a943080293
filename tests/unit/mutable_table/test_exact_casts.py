"""Exact or refused (mutable_table/exact_casts.py): which stored type takes which batch
type, and how, over every pair of scalar types; the check's SQL and its refusal. The
values themselves are tried on Spark: tests/functional/mutable_table/test_exact_casts.py."""

from __future__ import annotations

import itertools

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.errors import JammiValidationError, refusal_message
from dbt.adapters.jammi.common.types import CLOSED_TYPES
from dbt.adapters.jammi.connections import JammiConnectionManager
from dbt.adapters.jammi.mutable_table import exact_casts
from dbt.adapters.jammi.mutable_table.schema_reconciliation import reconcile_schema

# Jammi's closed scalar set, a decimal at two precisions, and the types of points in time.
SCALAR_TYPES = (
    *CLOSED_TYPES,
    "decimal(10,2)",
    "decimal(18,2)",
    "date",
    "timestamp",
    "timestamp_ntz",
)
PAIRS = list(itertools.product(SCALAR_TYPES, SCALAR_TYPES))  # (stored, batch)

# The pairs whose values Spark's cast can change (with ANSI off it wraps and rounds
# without a word): every narrowing whole-number pair, whole numbers beyond a float's
# significand, a double into a float.
CHECKED = {
    ("tinyint", "smallint"),
    ("tinyint", "int"),
    ("tinyint", "bigint"),
    ("smallint", "int"),
    ("smallint", "bigint"),
    ("int", "bigint"),
    ("float", "int"),
    ("float", "bigint"),
    ("float", "double"),
    ("double", "bigint"),
}
# Every value survives: the same type, widening whole numbers, whole numbers a float's
# significand holds, a float into a double, a narrower decimal at the same scale, a date
# into a timestamp.
EXACT_CHANGES = {
    ("smallint", "tinyint"),
    ("int", "tinyint"),
    ("int", "smallint"),
    ("bigint", "tinyint"),
    ("bigint", "smallint"),
    ("bigint", "int"),
    ("float", "tinyint"),
    ("float", "smallint"),
    ("double", "tinyint"),
    ("double", "smallint"),
    ("double", "int"),
    ("double", "float"),
    ("decimal(18,2)", "decimal(10,2)"),
    ("timestamp", "date"),
    ("timestamp_ntz", "date"),
}


def _rule(stored: str, batch: str):
    return exact_casts.cast_rule(stored, batch)


def test_every_pair_is_exact_checked_or_refused():
    rules = {pair: _rule(*pair) for pair in PAIRS}
    assert {p for p, r in rules.items() if r == exact_casts.CHECKED} == CHECKED
    exact = {p for p, r in rules.items() if r == exact_casts.EXACT}
    assert exact == EXACT_CHANGES | {(t, t) for t in SCALAR_TYPES}
    refused = [p for p, r in rules.items() if r is None]
    assert len(PAIRS) == 196 and len(refused) == 196 - len(CHECKED) - len(exact) == 157
    # spelled as Spark reports them
    assert _rule("INT", "BIGINT") == exact_casts.CHECKED
    assert _rule("decimal(18, 2)", "decimal(10,2)") == exact_casts.EXACT


@pytest.mark.parametrize("stored, batch", PAIRS)
def test_reconciliation_refuses_checks_or_takes_each_pair(stored, batch):
    """What a run does with each pair before anything is written: refused with the cast
    back, checked value by value, or taken as it is."""
    definition = {
        "columns": [["id", "bigint"], ["v", batch]],
        "storage_key": ["id"],
        "history": "none",
    }
    rule = _rule(stored, batch)
    if rule is None:
        with pytest.raises(JammiValidationError) as refused:
            reconcile_schema("m", definition, [["id", "bigint"], ["v", stored]])
        assert f"cast(v as {stored}) as v" in str(refused.value)
        return
    result = reconcile_schema("m", definition, [["id", "bigint"], ["v", stored]])
    assert dict(result.definition["columns"])["v"] == stored  # the stored type stays
    expected = [["v", stored, batch]] if rule == exact_casts.CHECKED else []
    assert result.checked_casts == expected


def test_the_check_compares_in_a_type_that_holds_both():
    assert exact_casts.witness_type("int", "bigint") == "bigint"
    assert exact_casts.witness_type("float", "double") == "double"
    assert exact_casts.witness_type("float", "int") == "double"
    assert exact_casts.witness_type("decimal(10,2)", "decimal(38,4)") == "decimal(38,4)"
    assert exact_casts.witness_type("int", "decimal(38,0)") == "decimal(38,0)"
    predicate = exact_casts.lossy_value_predicate("`qty`", "int", "bigint")
    assert predicate == (
        "(`qty` is not null and not "
        "(cast(try_cast(`qty` as int) as bigint) <=> cast(`qty` as bigint)))"
    )
    # a bigint beside a float is compared as a bigint below 2^63 (Spark's float to
    # decimal goes through the float's shortest text; a float of 2^63 saturates)
    assert exact_casts.lossy_value_predicate("b", "double", "bigint") == (
        "(b is not null and not (try_cast(b as double) < 9223372036854775808D and "
        "try_cast(try_cast(b as double) as bigint) <=> b))"
    )


def test_the_check_reads_the_batch_once_and_stops_at_five_rows():
    checks = exact_casts.value_checks([["qty", "int", "bigint"], ["price", "double", "bigint"]])
    sql = exact_casts.value_check_sql(checks, "(select * from src)")
    assert sql.startswith("select cast(`qty` as string), cast(`price` as string), ")
    assert sql.count("from (select * from src) as batch") == 1
    assert "as _refused_0" in sql and "as _refused_1" in sql
    assert " or " in sql and sql.endswith("limit 5")
    # nothing to check: no query at all (the adapter returns before running one)
    assert exact_casts.value_checks([], "parquet", [["at", "timestamp"]]) == []


def test_the_refusal_names_the_model_column_values_and_fix():
    checks = exact_casts.value_checks([["qty", "int", "bigint"], ["price", "double", "bigint"]])
    rows = [("3000000000", "1", True, False), ("-3000000000", "2", True, False)]
    error = exact_casts.value_check_error("orders", checks, rows)
    assert error is not None
    text = str(error)
    assert "mutable_table 'orders': column 'qty' is stored as int, which cannot hold" in text
    assert "3000000000, -3000000000" in text and "nothing was written" in text
    assert "price" not in text.split("Fix:")[0]  # no value of price is lossy
    assert "Fix: send only values int holds exactly" in text and "store bigint" in text
    assert exact_casts.value_check_error("orders", checks, []) is None


def test_orc_refuses_the_timestamps_its_files_read_a_second_late():
    """Spark's ORC reads 1969-12-31 23:59:59.5 (UTC) back as 1970-01-01 00:00:00.5."""
    checks = exact_casts.value_checks(
        [], "orc", [["at", "timestamp"], ["day", "date"], ["local_at", "timestamp_ntz"]]
    )
    assert [(c.name, c.kind) for c in checks] == [
        ("at", exact_casts.ORC_TIMESTAMP),
        ("day", exact_casts.ORC_TIMESTAMP),
    ]
    assert checks[0].predicate() == (
        "(unix_micros(cast(`at` as timestamp)) > -1000000 and "
        "unix_micros(cast(`at` as timestamp)) < 0)"
    )
    error = exact_casts.value_check_error(
        "events", checks, [("1969-12-31 23:59:59.5", "1969-12-31", True, False)]
    )
    assert error is not None
    assert "column 'at' is a timestamp of an orc table" in str(error)
    assert "Fix: store the table as parquet or delta" in str(error)


def test_a_merge_function_sum_adds_wide_and_goes_back_checked():
    assert exact_casts.exact_sum_type("int") == "decimal(38,0)"
    assert exact_casts.exact_sum_type("decimal(10,2)") == "decimal(38,2)"
    assert exact_casts.exact_sum_type("double") is None
    sql = exact_casts.checked_cast_sql("x", "decimal(38,0)", "int", "column 'clicks'")
    assert sql.startswith("case when (x is not null and not (cast(try_cast(x as int)")
    assert "raise_error(concat('jammi_refused<<column \\'clicks\\' cannot hold" in sql
    assert sql.endswith("else cast(x as int) end")
    # a cast that keeps every value is a plain cast
    assert exact_casts.checked_cast_sql("x", "int", "bigint", "c") == "cast(x as bigint)"


def test_a_refusal_raised_in_a_statement_reaches_the_user_without_spark_around_it():
    spark_text = (
        "org.apache.spark.SparkRuntimeException: [USER_RAISED_EXCEPTION] "
        "jammi_refused<<column 'clicks' cannot hold the value exactly as int: 2147484647>> "
        "SQLSTATE: P0001\n\tat org.apache.spark..."
    )
    assert (
        refusal_message(spark_text)
        == "column 'clicks' cannot hold the value exactly as int: 2147484647"
    )
    assert refusal_message("[CAST_OVERFLOW] ...") is None

    class _Failing(JammiConnectionManager):
        def __init__(self, error: Exception) -> None:
            self.error = error

        def _add_query_comment(self, sql: str) -> str:
            return sql

        def add_query(self, *args, **kwargs):
            raise self.error

    with pytest.raises(DbtRuntimeError) as raised:
        _Failing(RuntimeError(spark_text)).execute("select 1", fetch=True)
    assert "cannot hold the value exactly as int: 2147484647" in str(raised.value)
    assert "SQLSTATE" not in str(raised.value) and "org.apache" not in str(raised.value)
    with pytest.raises(RuntimeError) as other:
        _Failing(RuntimeError("[CAST_OVERFLOW] boom")).execute("select 1")
    assert "CAST_OVERFLOW" in str(other.value)
