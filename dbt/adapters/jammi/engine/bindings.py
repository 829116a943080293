"""Query bindings on `method: session` rendered as SQL literals that keep their value.

dbt-spark's session wrapper substitutes bindings (dbt uses them to load seeds) with
`'{value}'` for everything that is not a number or datetime: a NULL cell becomes the
string 'None', and a `'` or `\\` in a cell ends the literal early (a broken seed, or SQL
spliced from a CSV). Numbers go through float(), so integers above 2**53 and exact
decimals lose digits. Over thrift the same seeds load correctly (PyHive escapes its
parameters), so this is a session-only defect of dbt-spark, seen as the failures of
dbt-tests-adapter's `right`, `replace` and `split_part` suites.

The wrapper below renders those four kinds exactly (NULL, an escaped string literal, the
integer or decimal digits) and leaves every other value to dbt-spark. It also gives back
the message PySpark 4.0 loses for Delta's errors (engine/spark_errors.py).
"""

from __future__ import annotations

import decimal
from typing import Any, Optional, Union

from dbt.adapters.spark.session import SessionConnectionWrapper

from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.engine.spark_errors import reraise_with_spark_message


class JammiSessionConnectionWrapper(SessionConnectionWrapper):
    def execute(self, sql: str, bindings: Optional[list[Any]] = None) -> None:
        try:
            super().execute(sql, bindings)
        except Exception as exc:
            reraise_with_spark_message(exc)
            raise

    def fetchall(self) -> Optional[list[Any]]:
        try:
            return super().fetchall()
        except Exception as exc:
            reraise_with_spark_message(exc)
            raise

    @classmethod
    def _fix_binding(cls, value: Any) -> Union[str, float]:
        return render_binding(value)


def render_binding(value: Any) -> Union[str, float]:
    """One binding as the session handle puts it into the SQL: NULL, strings, integers
    and decimals exactly (see above); any other value as dbt-spark renders it."""
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return sql_string_literal(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, decimal.Decimal) and value.is_finite():
        return format(value, "f")
    return SessionConnectionWrapper._fix_binding(value)


def with_exact_bindings(handle: Any) -> Any:
    """dbt-spark's session handle re-wrapped; any other handle is returned unchanged."""
    if type(handle) is SessionConnectionWrapper:
        return JammiSessionConnectionWrapper(handle.handle)
    return handle
