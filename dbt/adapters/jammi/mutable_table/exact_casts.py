"""Exact or refused: what a stored column takes from a batch whose output type differs
(docs/mutable_table.md#changing-a-stored-columns-type).

A run casts the batch to the stored column types. A cast may keep every value of its
source type (``exact``: a smaller whole number into a larger one, a float into a double,
a date into a timestamp), keep only some (``checked``: a bigint into an int keeps the
values in int's range, a double into a float the values a float holds exactly), or mean
something else (refused by schema reconciliation). A checked cast is checked on the
batch, before anything is written: each value must come back unchanged, compared in a
type that holds both exactly (the witness). Spark's own cast is no check: with ANSI off
it wraps an overflowing integer and rounds a double without a word.

The same rule keeps a merge function's ``sum`` exact (the combined value is cast back to
the stored type): ``checked_cast_sql`` raises inside the statement, before its write
commits, with a message the connection shows as it is (``REFUSAL_MARKER``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import REFUSAL_END, REFUSAL_MARKER, JammiValidationError
from dbt.adapters.jammi.common.types import decimal_parts, normalize_type
from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.mutable_table.table_format import table_format

# Bits of each whole-number type, and the whole numbers a float type holds exactly (its
# significand: 24 bits for float, 53 for double).
INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
SIGNIFICAND_BITS = {"float": 24, "double": 53}

EXACT = "exact"
CHECKED = "checked"

# Offending rows shown in a refusal.
SAMPLE_ROWS = 5


def cast_rule(stored_type: str, batch_type: str) -> Optional[str]:
    """How a batch column of ``batch_type`` goes into a stored column of
    ``stored_type``: ``EXACT`` (every value survives, or the types are the same),
    ``CHECKED`` (each value is checked before anything is written), or None (refused:
    schema reconciliation names the cast back)."""
    stored, batch = normalize_type(stored_type), normalize_type(batch_type)
    if stored == batch:
        return EXACT
    if stored in INTEGER_BITS and batch in INTEGER_BITS:
        return EXACT if INTEGER_BITS[batch] <= INTEGER_BITS[stored] else CHECKED
    if stored in SIGNIFICAND_BITS:
        if batch in INTEGER_BITS:
            # a whole number of n bits needs n - 1 significand bits (the sign is apart)
            return EXACT if INTEGER_BITS[batch] - 1 <= SIGNIFICAND_BITS[stored] else CHECKED
        if batch in SIGNIFICAND_BITS:
            return EXACT if SIGNIFICAND_BITS[batch] <= SIGNIFICAND_BITS[stored] else CHECKED
        return None
    if stored in ("timestamp", "timestamp_ntz") and batch == "date":
        return EXACT
    stored_decimal, batch_decimal = decimal_parts(stored), decimal_parts(batch)
    if (
        stored_decimal is not None
        and batch_decimal is not None
        and batch_decimal[1] == stored_decimal[1]
        and batch_decimal[0] <= stored_decimal[0]
    ):
        return EXACT
    return None


def witness_type(stored_type: str, source_type: str) -> str:
    """A type that holds every value of both types exactly: where a checked value and
    its stored form are compared (a bigint beside a float is compared as a whole number
    instead: lossy_value_predicate)."""
    stored, source = normalize_type(stored_type), normalize_type(source_type)
    if stored in INTEGER_BITS and source in INTEGER_BITS:
        return "bigint"
    if decimal_parts(stored) or decimal_parts(source):
        # whole numbers and decimals: 38 digits at the larger scale
        scale = max((decimal_parts(t) or (0, 0))[1] for t in (stored, source))
        return f"decimal(38,{scale})"
    return "double"


# 2^63 as a double: the one whole float at or above it that a bigint cast saturates at.
_TWO_TO_63 = "9223372036854775808D"


def lossy_value_predicate(expr: str, stored_type: str, source_type: str) -> str:
    """SQL true for a value of ``expr`` (of ``source_type``) that the stored type cannot
    hold exactly: a ``try_cast`` that overflows (NULL) or a stored value that compares
    unequal to the source. NaN equals NaN in Spark; -0.0 keeps its sign through the
    cast. A bigint and its float are compared as bigints, below 2^63: Spark casts a float
    to a decimal through its shortest text (-2^63 would read -9223372036854776000), and a
    float of 2^63 to bigint's largest value."""
    stored, source = normalize_type(stored_type), normalize_type(source_type)
    kept = f"try_cast({expr} as {stored})"
    if source == "bigint" and stored in SIGNIFICAND_BITS:
        same = f"({kept} < {_TWO_TO_63} and try_cast({kept} as bigint) <=> {expr})"
    else:
        witness = witness_type(stored, source)
        same = f"(cast({kept} as {witness}) <=> cast({expr} as {witness}))"
    return f"({expr} is not null and not {same})"


def refusal_sql(message: str, value_expr: Optional[str] = None) -> str:
    """Spark's raise_error with ``message`` (and the offending value) between the
    refusal markers."""
    text = sql_string_literal(REFUSAL_MARKER + message)
    end = sql_string_literal(REFUSAL_END)
    if value_expr is None:
        return f"raise_error(concat({text}, {end}))"
    return f"raise_error(concat({text}, coalesce(cast({value_expr} as string), 'NULL'), {end}))"


def checked_cast_sql(expr: str, source_type: str, stored_type: str, subject: str) -> str:
    """``cast(expr as stored_type)`` that raises (inside the statement, before its write
    commits) instead of storing a value the stored type cannot hold exactly."""
    stored = normalize_type(stored_type)
    if cast_rule(stored, source_type) == EXACT:
        return f"cast({expr} as {stored})"
    refusal = refusal_sql(f"{subject} cannot hold the value exactly as {stored}: ", expr)
    return (
        f"case when {lossy_value_predicate(expr, stored, source_type)} "
        f"then cast({refusal} as {stored}) else cast({expr} as {stored}) end"
    )


# What a check guards: a cast the stored type may not hold (CAST), or a value the table's
# file format would not read back as written (ORC_TIMESTAMP: Spark's ORC reads a
# timestamp in the second before 1970-01-01 00:00:00 UTC that has a fraction of a second
# one second later; timestamp_ntz is read back as written).
CAST = "cast"
ORC_TIMESTAMP = "orc_timestamp"


@dataclass(frozen=True)
class ValueCheck:
    """A batch column whose values are checked before anything is written."""

    name: str
    stored_type: str
    batch_type: str
    kind: str = CAST

    def predicate(self) -> str:
        column = quote_identifier(self.name)
        if self.kind == ORC_TIMESTAMP:
            micros = f"unix_micros(cast({column} as timestamp))"
            return f"({micros} > -1000000 and {micros} < 0)"
        return lossy_value_predicate(column, self.stored_type, self.batch_type)

    def problem(self, samples: Sequence[str]) -> str:
        if self.kind == ORC_TIMESTAMP:
            return (
                f"column '{self.name}' is a timestamp of an orc table, whose files read a "
                "timestamp in the second before 1970-01-01 00:00:00 UTC that has a fraction "
                f"of a second one second later: {', '.join(samples)}"
            )
        return (
            f"column '{self.name}' is stored as {self.stored_type}, which cannot hold "
            f"these {self.batch_type} values of the batch exactly: {', '.join(samples)}"
        )

    def fix(self) -> str:
        if self.kind == ORC_TIMESTAMP:
            return (
                "store the table as parquet or delta (file_format), or the column as "
                "timestamp_ntz; a rebuild needs --full-refresh (config full_refresh: true)"
            )
        return (
            f"send only values {self.stored_type} holds exactly (filter or round them in the "
            f"model), or store {self.batch_type}: rebuild the table with --full-refresh "
            "(needs config full_refresh: true)"
        )


def value_checks(
    casts: Sequence[Sequence[str]],
    file_format: Optional[str] = None,
    batch_columns: Sequence[Sequence[str]] = (),
) -> list[ValueCheck]:
    """The checks of a run: each checked cast ([name, stored type, batch type]), and on
    orc each timestamp column of the batch ([name, type])."""
    checks = [ValueCheck(str(n), str(s), str(b)) for n, s, b in casts]
    if file_format is not None and not table_format(file_format).timestamps_read_back_exactly:
        checks += [
            ValueCheck(str(n), "timestamp", normalize_type(str(t)), ORC_TIMESTAMP)
            for n, t in batch_columns
            if normalize_type(str(t)) in ("timestamp", "date")
        ]
    return checks


def value_check_sql(checks: Sequence[ValueCheck], batch_source: str) -> str:
    """Up to SAMPLE_ROWS rows of the batch that a check refuses: each checked column's
    value as text, then one flag per check. One pass over the batch, stopped at the
    first rows found."""
    flags = [check.predicate() for check in checks]
    values = ", ".join(f"cast({quote_identifier(c.name)} as string)" for c in checks)
    flagged = ", ".join(f"{flag} as _refused_{i}" for i, flag in enumerate(flags))
    return (
        f"select {values}, {flagged} from {batch_source} as batch "
        f"where {' or '.join(flags)} limit {SAMPLE_ROWS}"
    )


def value_check_error(
    model_name: str, checks: Sequence[ValueCheck], rows: Sequence[Sequence[Any]]
) -> Optional[JammiValidationError]:
    """The refusal for the rows ``value_check_sql`` found (None when it found none):
    each check with the values it refuses, and the first one's fix."""
    problems = []
    refusing = []
    for i, check in enumerate(checks):
        samples: list[str] = []
        for row in rows:
            if row[len(checks) + i] and str(row[i]) not in samples:
                samples.append(str(row[i]))
        if samples:
            problems.append(check.problem(samples))
            refusing.append(check)
    if not refusing:
        return None
    return JammiValidationError(
        f"mutable_table '{model_name}'",
        "; ".join(problems) + " (nothing was written)",
        refusing[0].fix(),
    )


def checked_casts_of(
    stored: Mapping[str, str], batch_columns: Sequence[Sequence[str]]
) -> list[list[str]]:
    """[name, stored type, batch type] of each batch column whose cast is checked."""
    return [
        [str(n), stored[str(n)], normalize_type(str(t))]
        for n, t in batch_columns
        if str(n) in stored and cast_rule(stored[str(n)], str(t)) == CHECKED
    ]


def exact_sum_type(stored_type: str) -> Optional[str]:
    """The type a merge function's ``sum`` of a stored column adds in: 38 digits at the
    column's scale for whole numbers and decimals (a bigint sum of bigints would wrap),
    None for floats (they add in their own type; a float sum rounds by nature)."""
    stored = normalize_type(stored_type)
    if stored in INTEGER_BITS:
        return "decimal(38,0)"
    parts = decimal_parts(stored)
    return f"decimal(38,{parts[1]})" if parts else None
