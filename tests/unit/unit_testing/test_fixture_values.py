"""Fixture values a dbt unit test's input column cannot hold exactly are refused
(unit_testing/fixture_values.py), without Spark; a run: the functional test
tests/functional/adapter/test_unit_test_fixture_values.py."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dbt.adapters.jammi.unit_testing.fixture_values import (
    fixture_number,
    fixture_value_error,
    held_exactly,
)


@pytest.mark.parametrize(
    "value, spark_type, held",
    [
        (2147483647, "int", True),
        (2147483648, "int", False),
        (3000000000, "int", False),
        ("3000000000", "int", False),  # a csv fixture's text
        (-128, "tinyint", True),
        (128, "tinyint", False),
        (1.5, "bigint", False),
        (9007199254740993, "double", False),  # 2^53 + 1
        (9007199254740992, "double", True),
        (0.1, "double", True),
        (0.1, "float", True),  # the float nearest 0.1 reads back as 0.1
        (16777217, "float", False),  # 2^24 + 1
        (1e39, "float", False),
        ("12.345", "decimal(5,2)", False),
        ("123.45", "decimal(5,2)", True),
        (1234.5, "decimal(5,2)", False),
        (3000000000, "string", True),  # not a number column: dbt's own cast
    ],
)
def test_held_exactly(value, spark_type, held):
    assert held_exactly(fixture_number(value), spark_type) is held


def test_only_numbers_are_checked():
    assert fixture_number(True) is None
    assert fixture_number(None) is None
    assert fixture_number("2024-01-01") is None
    assert fixture_number(float("nan")) is None
    assert fixture_number(" 12 ") == Decimal(12)


def test_the_first_value_not_held_is_refused_with_the_row_and_column():
    types = {"id": "int", "qty": "int"}
    assert fixture_value_error("unit test fixture for s.base", [{"id": 1, "qty": 5}], types) is None
    error = fixture_value_error(
        "unit test fixture for s.base", [{"id": 1, "qty": 5}, {"ID": 2, "qty": 3000000000}], types
    )
    message = str(error)
    assert "unit test fixture for s.base" in message
    assert "fixture row 2: column 'qty' is int, which cannot hold 3000000000 exactly" in message
    assert "Fix:" in message
