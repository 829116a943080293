"""Running a Python model's compiled program: what dbt compiles (the model's code and
py_script_postfix's helpers) is executed in a namespace of its own, model(dbt, session)
is called with the adapter's load function, and the result must be a DataFrame. No Spark
here: the session and the DataFrames are stand-ins, except where a real pyspark class
is what is checked."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.python_models.model_program import run_model_program, spark_dataframe

# the shape of dbt-core's py_script_postfix: dbtObj carries ref/source/config/this
POSTFIX = """
def ref(*args, dbt_load_df_function):
    return dbt_load_df_function({"orders": "analytics.orders"}[args[0]])

class dbtObj:
    def __init__(self, load_df_function):
        self.ref = lambda *args: ref(*args, dbt_load_df_function=load_df_function)
        self.is_incremental = False
"""


class FakeSession:
    def __init__(self):
        self.created = []

    def createDataFrame(self, frame):  # noqa: N802 (pyspark's name)
        self.created.append(frame)
        return ("spark", frame)


def test_model_reads_through_the_adapters_load_function(monkeypatch):
    loaded = []
    monkeypatch.setattr(
        "dbt.adapters.jammi.python_models.model_program.spark_dataframe",
        lambda returned, session, subject: returned,
    )
    program = "def model(dbt, session):\n    return dbt.ref('orders')\n" + POSTFIX
    result = run_model_program(
        program, FakeSession(), lambda name: loaded.append(name) or name, "m"
    )
    assert loaded == ["analytics.orders"]
    assert result == "analytics.orders"


def test_a_program_without_model_is_refused():
    with pytest.raises(JammiValidationError, match="defines no model"):
        run_model_program("x = 1\n" + POSTFIX, FakeSession(), str, "m")


def test_an_error_in_model_names_the_model():
    program = "def model(dbt, session):\n    raise KeyError('price')\n" + POSTFIX
    with pytest.raises(DbtRuntimeError, match=r"python model 'm': model\(\) raised KeyError"):
        run_model_program(program, FakeSession(), str, "m")


@pytest.mark.parametrize("returned, kind", [({"a": 1}, "builtins.dict"), ([1, 2], "builtins.list")])
def test_a_result_that_is_no_dataframe_is_refused(returned, kind):
    with pytest.raises(JammiValidationError, match=f"returned {kind}, not a DataFrame"):
        spark_dataframe(returned, FakeSession(), "python model 'm'")


def test_a_pandas_frame_becomes_a_spark_dataframe():
    frame_type = type("DataFrame", (), {"__module__": "pandas.core.frame"})
    frame = frame_type()
    session = FakeSession()
    assert spark_dataframe(frame, session, "python model 'm'") == ("spark", frame)
    assert session.created == [frame]


def test_a_pandas_on_spark_frame_is_converted_with_to_spark():
    frame_type = type(
        "DataFrame", (), {"__module__": "pyspark.pandas.frame", "to_spark": lambda self: "sdf"}
    )
    assert spark_dataframe(frame_type(), FakeSession(), "python model 'm'") == "sdf"
