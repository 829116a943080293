"""A Python model's compiled program, run in this process: dbt compiles the model's code
followed by its helpers (``py_script_postfix``: ``ref``, ``source``, ``config``,
``this``, ``is_incremental`` and the ``dbtObj`` that carries them); the program is
executed in a namespace of its own, ``model(dbtObj(load), session)`` is called with the
adapter's ``load`` (tenant-scoped reads), and what it returns becomes a Spark
DataFrame."""

from __future__ import annotations

from typing import Any, Callable

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.errors import JammiValidationError


def run_model_program(
    program: str, session: Any, load_relation: Callable[[str], Any], model_name: str
) -> Any:
    """Execute ``program`` and call its ``model(dbt, session)``; a Spark DataFrame of
    what it returned (pandas and pandas-on-Spark frames converted)."""
    subject = f"python model '{model_name}'"
    namespace: dict[str, Any] = {"__name__": f"dbt_python_model_{model_name}"}
    exec(compile(program, f"<{subject}>", "exec"), namespace)  # the model's own code
    missing = [name for name in ("model", "dbtObj") if not callable(namespace.get(name))]
    if missing:
        raise JammiValidationError(
            subject,
            f"its compiled program defines no {' and no '.join(missing)}",
            "define `def model(dbt, session):` returning a DataFrame, in a .py file "
            "under models/ (dbt adds the rest)",
        )
    dbt = namespace["dbtObj"](load_relation)
    try:
        returned = namespace["model"](dbt, session)
    except (DbtRuntimeError, JammiValidationError):
        raise
    except Exception as exc:
        raise DbtRuntimeError(f"{subject}: model() raised {type(exc).__name__}: {exc}") from exc
    return spark_dataframe(returned, session, subject)


def spark_dataframe(returned: Any, session: Any, subject: str) -> Any:
    """``returned`` as a Spark DataFrame: a Spark (or Spark Connect) DataFrame as it is,
    a pandas-on-Spark frame through ``to_spark()``, a pandas frame through ``createDataFrame``."""
    from pyspark.sql import DataFrame

    kind = f"{type(returned).__module__}.{type(returned).__name__}"
    if isinstance(returned, DataFrame) or kind == "pyspark.sql.connect.dataframe.DataFrame":
        return returned  # PySpark 3.5's Connect DataFrame is no pyspark.sql.DataFrame
    if kind.startswith("pyspark.pandas.") and hasattr(returned, "to_spark"):
        return returned.to_spark()
    if kind == "pandas.core.frame.DataFrame":
        return session.createDataFrame(returned)
    raise JammiValidationError(
        subject,
        f"model() returned {kind}, not a DataFrame",
        "return a Spark DataFrame (or a pandas / pandas-on-Spark DataFrame)",
    )
