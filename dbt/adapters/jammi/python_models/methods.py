"""Which connection methods run a Python model: those whose Spark is in reach of this
process's Python. A Python model anywhere else stops before any SQL runs."""

from __future__ import annotations

from dbt.adapters.jammi.common.errors import JammiValidationError

# The embedded session runs the model in dbt's own process; over Spark Connect the
# model's program runs in dbt's process on the server's remote SparkSession.
PYTHON_METHODS = ("session", "connect")


def check_python_method(method: str, model_name: str) -> None:
    """JammiValidationError unless ``method`` runs Python models."""
    if method in PYTHON_METHODS:
        return
    raise JammiValidationError(
        f"python model '{model_name}'",
        f"connection method '{method}' cannot run Python models: a Thrift, HTTP or ODBC "
        "server runs SQL only, and dbt-jammi does not submit notebooks or jobs",
        "run Python models with method: session (the embedded Spark session) or "
        "method: connect (a Spark Connect server), or write this model in SQL",
    )
