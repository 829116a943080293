"""Spark's errors as PySpark hands them over: the message PySpark 4.0 loses, and the
query-context logs PySpark 4.1 prints for every failed statement (the last function).

Spark's own error message on `method: session` when PySpark 4.0 loses it:

PySpark 4.0 turns a failed statement's Java exception into a Python one and, while doing
so, formats its message with Spark's error-class table only. Delta Lake 4.0 raises errors
whose classes live in Delta's own table (``DELTA_MERGE_UNRESOLVED_EXPRESSION``, ...), so
formatting fails, and what reaches dbt is a second error about that failure ("Cannot
find main error class ...") instead of Delta's message: a MERGE on a column that does not
exist no longer names the column. The original Java exception is still the second
error's context; its own ``getMessage()`` (Delta formats it with Delta's table) is the
message the user needs.
"""

from __future__ import annotations

import logging
from typing import Optional

from dbt_common.exceptions import DbtRuntimeError

_FORMATTING_CALL = "SparkThrowableHelper.getMessage"
# PySpark 4.1's loggers that print every failed statement's error with its Java stack
# trace, at ERROR, on their own stderr handler, as the exception is built.
QUERY_CONTEXT_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def lost_spark_message(exc: BaseException) -> Optional[str]:
    """The original error's message when ``exc`` is PySpark failing to format it, else
    None."""
    try:
        from py4j.protocol import Py4JJavaError
    except ImportError:  # pragma: no cover - pyspark always brings py4j
        return None
    original = exc.__context__
    if not (
        isinstance(exc, Py4JJavaError)
        and _FORMATTING_CALL in str(exc.errmsg)
        and isinstance(original, Py4JJavaError)
    ):
        return None
    try:
        message = original.java_exception.getMessage()
    except Exception:
        return None
    return str(message) if message else None


def reraise_with_spark_message(exc: BaseException) -> None:
    """Raise a DbtRuntimeError with the original message when PySpark lost it; return
    otherwise (the caller re-raises ``exc``)."""
    message = lost_spark_message(exc)
    if message is not None:
        raise DbtRuntimeError(message) from exc


def quiet_query_context_logs() -> None:
    """Keep PySpark's query-context loggers from printing each failed statement.

    On PySpark 4.1 every statement that fails with a query context is logged at ERROR,
    with its whole Java stack trace as JSON, the moment the exception is built, whether
    or not anything catches it. The adapter's own probes (is there a registry, does this
    table exist yet) fail by design, so a healthy `dbt build` printed screens of stack
    traces. A statement that really fails still raises, and dbt reports its error as it
    does under `type: spark` (docs/connecting.md, "PySpark's query-context logs").
    PySpark 3.5 has no such loggers."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:
        return
    for name in QUERY_CONTEXT_LOGGERS:
        # PySpark's own class: it takes the keyword fields PySpark logs with
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL)
