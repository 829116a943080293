"""A dbt unit test's fixture value that its column's type cannot hold exactly: dbt types
each fixture value with ``safe_cast`` to the input's column type, and Spark's cast of
3000000000 to an int wraps it (ANSI off), so the test would run on a value its author
never wrote. The adapter's ``validate_fixture_rows`` refuses it before the test runs,
with the same rule as a mutable table's exact casts (docs/mutable_table.md, "Types").
Numbers only: whole-number, decimal, float and double columns."""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import decimal_parts, normalize_type
from dbt.adapters.jammi.mutable_table.exact_casts import INTEGER_BITS

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def fixture_number(value: Any) -> Optional[Decimal]:
    """The number a fixture value writes (a YAML number, or a csv/text number), else
    None (booleans, text, NULL, NaN and infinities are left to dbt)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        return Decimal(value.strip())
    return None


def _float32_text(value: float) -> Optional[Decimal]:
    """The shortest text of the float32 nearest ``value`` (None past its range)."""
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return None
    if not math.isfinite(single):
        return None
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return Decimal(text)
    return Decimal(repr(single))


def held_exactly(number: Decimal, spark_type: str) -> bool:
    """Whether a column of ``spark_type`` holds ``number`` exactly (True for types this
    check does not cover)."""
    t = normalize_type(spark_type)
    if t in INTEGER_BITS:
        bits = INTEGER_BITS[t]
        return number == number.to_integral_value() and (
            -(2 ** (bits - 1)) <= number < 2 ** (bits - 1)
        )
    parts = decimal_parts(t)
    if parts is not None:
        precision, scale = parts
        exponent = number.normalize().as_tuple().exponent
        places = max(0, -int(exponent)) if isinstance(exponent, int) else 0
        whole_digits = len(str(abs(int(number)))) if abs(number) >= 1 else 0
        return places <= scale and whole_digits <= precision - scale
    if t == "float":
        return _float32_text(float(number)) == number.normalize()
    if t == "double":
        as_double = float(number)
        return math.isfinite(as_double) and Decimal(repr(as_double)) == number.normalize()
    return True


def fixture_value_error(
    subject: str, rows: Sequence[Mapping[str, Any]], column_types: Mapping[str, str]
) -> Optional[JammiValidationError]:
    """The refusal of the first fixture value its column cannot hold exactly, else None.
    ``column_types``: the input's columns, names lower-cased (as dbt matches them)."""
    for index, row in enumerate(rows):
        for name, value in row.items():
            column_type = column_types.get(str(name).lower())
            number = fixture_number(value)
            if column_type is None or number is None or held_exactly(number, column_type):
                continue
            return JammiValidationError(
                subject,
                f"fixture row {index + 1}: column '{name}' is {column_type}, which cannot "
                f"hold {value!r} exactly (Spark's cast would give the test another value)",
                f"give '{name}' a value a {column_type} holds, or widen the input's column",
            )
    return None
