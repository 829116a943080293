"""Which connection methods run a Python model, and the refusal the others give."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.python_models.methods import PYTHON_METHODS, check_python_method


@pytest.mark.parametrize("method", ["session", "connect"])
def test_the_embedded_session_and_spark_connect_run_python(method):
    assert method in PYTHON_METHODS
    check_python_method(method, "orders")  # no error


@pytest.mark.parametrize("method", ["thrift", "http", "odbc"])
def test_sql_only_methods_are_refused_naming_the_ones_that_run_python(method):
    with pytest.raises(JammiValidationError) as raised:
        check_python_method(method, "orders")
    message = str(raised.value)
    assert "python model 'orders'" in message
    assert f"connection method '{method}' cannot run Python models" in message
    assert set(PYTHON_METHODS) == {"session", "connect"}
    for runs_python in PYTHON_METHODS:
        assert f"method: {runs_python}" in message
