"""PySpark 4.0's lost Delta error messages come back (engine/spark_errors.py)."""

from types import SimpleNamespace

import pytest
from dbt_common.exceptions import DbtRuntimeError
from py4j.protocol import Py4JJavaError

from dbt.adapters.jammi.engine.spark_errors import lost_spark_message, reraise_with_spark_message

DELTA_MESSAGE = "[DELTA_MERGE_UNRESOLVED_EXPRESSION] Cannot resolve thisisnotacolumn"


def java_error(call: str, message: str) -> Py4JJavaError:
    java = SimpleNamespace(_target_id="o1", getMessage=lambda: message)
    return Py4JJavaError(f"An error occurred while calling {call}.\n", java)


def formatting_failure() -> Py4JJavaError:
    """The second error PySpark raises while formatting the first, as Python chains it."""
    try:
        try:
            raise java_error("o30.sql", DELTA_MESSAGE)
        except Py4JJavaError:
            # implicit chaining, as in PySpark: the first error is only the context
            raise java_error(  # noqa: B904
                "z:org.apache.spark.SparkThrowableHelper.getMessage",
                "[INTERNAL_ERROR] Cannot find main error class 'DELTA_MERGE_UNRESOLVED_EXPRESSION'",
            )
    except Py4JJavaError as exc:
        return exc


def test_the_original_message_is_found():
    assert lost_spark_message(formatting_failure()) == DELTA_MESSAGE
    with pytest.raises(DbtRuntimeError, match="Cannot resolve thisisnotacolumn"):
        reraise_with_spark_message(formatting_failure())


def test_other_errors_are_left_alone():
    plain = java_error("o30.sql", "something else")
    assert lost_spark_message(plain) is None
    assert lost_spark_message(ValueError("x")) is None
    reraise_with_spark_message(plain)  # returns: the caller re-raises the error itself
