"""Exact or refused, on Spark (docs/mutable_table.md#changing-a-stored-columns-type).

The property: for every pair of scalar types a stored column may take from a batch
(stored type x batch type, mutable_table/exact_casts.cast_rule) and each hard value of the
batch type, the run's check refuses exactly the values the stored type cannot hold, and
every value it lets through is stored exactly: written through the lane's table format
and read back, compared with the value in Python (NaN with NaN, -0.0 by its sign). The
pairs a run refuses outright are asserted without Spark
(tests/unit/mutable_table/test_exact_casts.py). Then the runs themselves: a narrowing
column, a bigint into a double, a merge function's sum, an scd2 history, and dates
before 1900.
"""

from __future__ import annotations

import datetime
import math
import struct
from decimal import Decimal

import pytest

from dbt.adapters.jammi.mutable_table import exact_casts
from tests.functional.mutable_table.util import MutableProjectBase, rows, run, table_rows

INTEGER_RANGE = {
    t: (-(2 ** (b - 1)), 2 ** (b - 1) - 1) for t, b in exact_casts.INTEGER_BITS.items()
}

# Each type's hard values, as the text Spark casts to the type.
VALUES = {
    "boolean": ["true", "false"],
    "tinyint": ["-128", "127", "0"],
    "smallint": ["-32768", "32767", "-129", "128"],
    "int": ["-2147483648", "2147483647", "32768", "16777216", "16777217", "-16777217"],
    "bigint": [
        "-9223372036854775808",
        "9223372036854775807",
        "3000000000",
        "2147483648",
        "9007199254740992",
        "9007199254740993",  # 2^53 + 1: no double holds it
        "16777217",
        "-128",
    ],
    "float": ["0.5", "-0.0", "NaN", "Infinity", "-Infinity", "3.4028235E38", "1.4E-45", "0.1"],
    "double": [
        "0.1",
        "0.5",
        "-0.0",
        "NaN",
        "Infinity",
        "1E300",
        "4.9E-324",
        "3.4028234663852886E38",  # the largest float
        "3.4028235677973366E38",  # just above it
        "16777217",
        "1.401298464324817E-45",  # the smallest float
    ],
    "decimal(10,2)": ["99999999.99", "-99999999.99", "0.01", "0.00"],
    "decimal(18,2)": ["9999999999999999.99", "-99999999.99", "0.01"],
    "string": ["x", ""],
    "binary": ["x"],
    "date": ["1500-01-01", "1899-12-31", "2024-02-29", "9999-12-31"],
    "timestamp": [
        "1850-01-01 00:00:00.000001",
        "1969-12-31 23:59:59.999999",  # orc reads it a second late: refused there
        "1969-12-31 23:59:59",
    ],
    "timestamp_ntz": ["1850-01-01 00:00:00.000001", "2024-06-01 12:34:56.123456"],
}
SCALAR_TYPES = list(VALUES)
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
NUMERIC = {*exact_casts.INTEGER_BITS, "float", "double", "decimal(10,2)", "decimal(18,2)"}


def _float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def _exact(type_: str, text: str):
    """The value Spark's cast of ``text`` to ``type_`` holds, exactly, in Python."""
    if type_ in exact_casts.INTEGER_BITS:
        return int(text)
    if type_ == "float":
        return _float32(float(text))
    if type_ == "double":
        return float(text)
    return Decimal(text)


def _holds(stored: str, value) -> bool:
    """Whether ``stored`` holds ``value`` exactly (the ground truth the check must meet)."""
    if stored in INTEGER_RANGE:
        low, high = INTEGER_RANGE[stored]
        return low <= value <= high
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return stored in ("float", "double")
    if stored == "double":
        return float(value) == value
    if stored == "float":
        try:
            return _float32(float(value)) == value
        except OverflowError:
            return False
    return True  # a wider decimal at the same scale


def _same(stored_value, original) -> bool:
    if isinstance(original, float) and math.isnan(original):
        return isinstance(stored_value, float) and math.isnan(stored_value)
    if stored_value != original:
        return False
    if isinstance(original, float) and original == 0 and isinstance(stored_value, float):
        return math.copysign(1, stored_value) == math.copysign(1, original)
    return True


def _read_back(stored: str, value):
    """The stored value in Python. A Thrift server sends a float as its shortest text
    (3.4028235E38 for the largest float): rounded to a float again, that text is the
    stored float exactly."""
    if value is None or stored not in ("float", "double"):
        return value
    return _float32(float(value)) if stored == "float" else float(value)


def _expected_text(stored: str, batch: str, text: str) -> str:
    if stored in ("timestamp", "timestamp_ntz") and batch == "date":
        return f"{text} 00:00:00"
    return text


def _pair_sql(stored: str, batch: str, table_format: str) -> str:
    """The batch type's values as a run stores them: an exact cast as it is, a checked one
    with its check's verdict, and on orc a timestamp with the format's check."""
    value = f"cast(text as {batch})"
    refused = []
    if exact_casts.cast_rule(stored, batch) == exact_casts.CHECKED:
        refused.append(exact_casts.lossy_value_predicate(value, stored, batch))
    if table_format == "orc" and stored == "timestamp":
        check = exact_casts.value_checks([], "orc", [["v", batch]])[0]
        refused.append(check.predicate().replace("`v`", value))
    lossy = " or ".join(refused) or "false"
    literals = ", ".join(f"({i}, '{t}')" for i, t in enumerate(VALUES[batch]))
    return (
        f"select '{batch}' as batch_type, i, ({lossy}) as lossy, "
        f"case when {lossy} then null else cast({value} as {stored}) end as v "
        f"from values {literals} as t(i, text)"
    )


def _orc_reads_it_back(text: str) -> bool:
    """Whether Spark's ORC reads this UTC timestamp back as written: not in the second
    before the epoch with a fraction of a second."""
    at = datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc)
    micros = (at - EPOCH) // datetime.timedelta(microseconds=1)
    return not -1_000_000 < micros < 0


@pytest.mark.spark4_path
class TestEveryPairKeepsOrRefusesEachValue(MutableProjectBase):
    def test_zero_silent_changes_and_no_value_refused_that_fits(self, project, fmt):
        formats = [fmt, "orc"] if fmt == "parquet" else [fmt]
        pairs = [
            (s, b)
            for s in SCALAR_TYPES
            for b in SCALAR_TYPES
            if exact_casts.cast_rule(s, b) is not None
        ]
        assert len(pairs) == 39  # 14 same-type pairs, 15 exact changes, 10 checked
        tried = silent = false_refusals = 0
        for table_format in formats:
            for n, stored in enumerate(SCALAR_TYPES):
                batches = [b for s, b in pairs if s == stored]
                table = f"{project.test_schema}.exact_{table_format}_{n}"
                project.run_sql(
                    f"create table {table} using {table_format} as "
                    + " union all ".join(_pair_sql(stored, b, table_format) for b in batches)
                )
                found = rows(
                    project, f"select batch_type, i, lossy, v, cast(v as string) from {table}"
                )
                assert len(found) == sum(len(VALUES[b]) for b in batches)
                for batch, i, lossy, value, value_text in found:
                    tried += 1
                    text = VALUES[batch][i]
                    if stored in NUMERIC and batch in NUMERIC:
                        original = _exact(batch, text)
                        fits = _holds(stored, original)
                        kept = not lossy and _same(_read_back(stored, value), original)
                    else:  # the same type, or a date into a timestamp: compared as text
                        fits = (
                            table_format != "orc"
                            or stored != "timestamp"
                            or _orc_reads_it_back(_expected_text(stored, batch, text))
                        )
                        kept = not lossy and value_text == _expected_text(stored, batch, text)
                    where = f"{table_format}: {batch} {text!r} into {stored}"
                    if fits and lossy:
                        false_refusals += 1
                        pytest.fail(f"refused a value that fits: {where}")
                    if not lossy and not kept:
                        silent += 1
                        pytest.fail(f"stored a changed value: {where} -> {value_text!r}")
        print(
            f"\nexact casts ({', '.join(formats)}): {len(pairs)} pairs, {tried} values, "
            f"{silent} silent changes, {false_refusals} values refused that fit"
        )
        assert tried == len(formats) * sum(len(VALUES[b]) for _, b in pairs)


def _model(config: str, narrow: str, wide: str) -> str:
    return (
        "{{ config(materialized='mutable_table', primary_key=['id']" + config + ") }}\n"
        "{% if var('step', 1) == 1 %}\n" + narrow + "\n{% else %}\n" + wide + "\n{% endif %}\n"
    )


NARROWED = _model(
    "",
    "select 1 as id, cast(5 as int) as qty, cast(1.5 as double) as price",
    "select 1 as id, cast({{ var('qty') }} as bigint) as qty, "
    "cast({{ var('price') }} as bigint) as price",
)
HISTORY = _model(
    ", history='scd2'",
    "select 1 as id, cast(5 as int) as qty",
    "select 1 as id, cast({{ var('qty') }} as bigint) as qty",
)
COUNTERS = _model(
    ", version_column='v', merge_functions={'clicks': 'sum'}",
    "select 1 as id, 1 as v, cast(2147483000 as int) as clicks",
    "select 1 as id, {{ var('v') }} as v, cast({{ var('clicks') }} as int) as clicks",
)
OLD_TIMES = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select 1 as id, timestamp'1850-01-01 00:00:00.000001' as at, date'1500-01-01' as day,
       timestamp_ntz'1899-12-31 23:59:59' as local_at
"""


@pytest.mark.spark4_path
class TestRunsKeepValuesOrFail(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "narrowed.sql": NARROWED,
            "history.sql": HISTORY,
            "counters.sql": COUNTERS,
            "old_times.sql": OLD_TIMES,
        }

    @staticmethod
    def _message(results) -> str:
        return results.results[0].message

    def test_a_value_the_stored_type_cannot_hold_fails_the_run(self, project):
        run(project, "narrowed")
        before = table_rows(project, "narrowed")
        failed = run(
            project, "narrowed", {"step": 2, "qty": 3000000000, "price": 1}, expect_pass=False
        )
        message = self._message(failed)
        assert "mutable_table 'narrowed': column 'qty' is stored as int" in message
        assert "3000000000" in message and "nothing was written" in message
        assert "Fix:" in message
        assert table_rows(project, "narrowed") == before
        # 2^53 + 1 into a double
        failed = run(
            project, "narrowed", {"step": 2, "qty": 7, "price": 9007199254740993}, expect_pass=False
        )
        assert "column 'price' is stored as double" in self._message(failed)
        assert "9007199254740993" in self._message(failed)
        assert table_rows(project, "narrowed") == before
        # values that fit are stored, and the stored types stay
        run(project, "narrowed", {"step": 2, "qty": -2147483648, "price": 9007199254740992})
        assert table_rows(project, "narrowed", "id, qty, price") == [
            (1, -2147483648, 9007199254740992.0)
        ]
        types = {r[0]: r[1] for r in rows(project, f"describe {project.test_schema}.narrowed")}
        assert types["qty"] == "int" and types["price"] == "double"

    def test_an_scd2_history_refuses_the_same_value(self, project):
        run(project, "history")
        before = table_rows(project, "history")
        failed = run(project, "history", {"step": 2, "qty": -3000000000}, expect_pass=False)
        assert "column 'qty' is stored as int" in self._message(failed)
        assert "-3000000000" in self._message(failed)
        assert table_rows(project, "history") == before

    def test_a_sum_past_its_stored_type_fails_without_a_stack_trace(self, project):
        run(project, "counters")
        before = table_rows(project, "counters")
        failed = run(project, "counters", {"step": 2, "v": 2, "clicks": 1000}, expect_pass=False)
        message = self._message(failed)
        assert "merge_functions sums column 'clicks', whose stored type int" in message
        assert "2147484000" in message
        assert "SQLSTATE" not in message and "\tat " not in message
        assert table_rows(project, "counters") == before
        # a sum that fits is stored
        run(project, "counters", {"step": 2, "v": 3, "clicks": 647})
        assert table_rows(project, "counters", "id, clicks") == [(1, 2147483647)]

    def test_dates_before_1900_are_stored_as_they_are(self, project):
        run(project, "old_times")
        assert table_rows(
            project,
            "old_times",
            "cast(at as string), cast(day as string), cast(local_at as string)",
        ) == [("1850-01-01 00:00:00.000001", "1500-01-01", "1899-12-31 23:59:59")]
