"""PySpark's lost Delta error messages come back, and its query-context logs stay quiet
(engine/spark_errors.py)."""

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


def test_query_context_logs_stay_quiet_and_a_failure_still_raises():
    """A failed statement's exception, built as PySpark 4.1 builds it, logs nothing once
    the connection manager has quieted the query-context loggers; the exception itself
    is unchanged."""
    import io
    import logging

    from pyspark.errors.exceptions.base import PySparkException

    PySparkLogger = pytest.importorskip(
        "pyspark.logger", reason="PySpark 3.5 has no query-context loggers"
    ).PySparkLogger

    from dbt.adapters.jammi.engine.spark_errors import (
        QUERY_CONTEXT_LOGGERS,
        quiet_query_context_logs,
    )

    class SqlContext:
        def contextType(self):
            return SimpleNamespace(name="SQL")

    class FailedStatement(PySparkException):
        def getQueryContext(self):
            return [SqlContext()]

    def fail():
        error = FailedStatement(message="[TABLE_OR_VIEW_NOT_FOUND] jammi_demo.topics")
        error._log_exception()  # as the captured exception's constructor does
        raise error

    logger = PySparkLogger.getLogger("SQLQueryContextLogger")
    level, logged = logger.level, io.StringIO()
    handler = logging.StreamHandler(logged)
    logger.addHandler(handler)
    try:
        logger.setLevel(logging.WARN)  # PySpark's own level
        with pytest.raises(FailedStatement):
            fail()
        assert "TABLE_OR_VIEW_NOT_FOUND" in logged.getvalue()
        logged.truncate(0)
        logged.seek(0)
        quiet_query_context_logs()
        assert {PySparkLogger.getLogger(n).level for n in QUERY_CONTEXT_LOGGERS} == {
            logging.CRITICAL
        }
        with pytest.raises(FailedStatement, match="TABLE_OR_VIEW_NOT_FOUND"):
            fail()
        assert logged.getvalue() == ""
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_the_connection_manager_quiets_them(tmp_path):
    import logging
    import multiprocessing

    PySparkLogger = pytest.importorskip(
        "pyspark.logger", reason="PySpark 3.5 has no query-context loggers"
    ).PySparkLogger
    from dbt.adapters.jammi.connections import JammiConnectionManager
    from dbt.adapters.jammi.credentials import JammiCredentials
    from dbt.adapters.jammi.engine.spark_errors import QUERY_CONTEXT_LOGGERS

    loggers = [PySparkLogger.getLogger(name) for name in QUERY_CONTEXT_LOGGERS]
    levels = [logger.level for logger in loggers]
    try:
        for logger in loggers:
            logger.setLevel(logging.WARN)
        credentials = JammiCredentials(method="session", schema="s", host="localhost")
        profile = SimpleNamespace(credentials=credentials, project_root=str(tmp_path))
        JammiConnectionManager(profile, multiprocessing.get_context("spawn"))
        assert [logger.level for logger in loggers] == [logging.CRITICAL] * 2
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)
