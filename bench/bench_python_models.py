"""The fixed cost of a Python model against the same model in SQL (embedded session,
parquet): a 10-row `table` and a 10-row `mutable_table` batch, each written once as SQL
and once as Python (`dbt.ref()` of the same source). Every model is built once, then
ROUNDS rounds run the SQL and the Python model of each kind in one dbt invocation each,
alternating which goes first; the figure is the median of dbt's execution time per
model. The Python side pays for running the program and registering its DataFrame as a
view; both then send the same statements. Run:
    .venv/bin/python bench/bench_python_models.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from harness import dbt_run, report, write_project

SOURCE = """
{{ config(materialized='table', file_format='parquet') }}
select id, concat('item-', id) as name, id * 10 as price from range(10) as t(id)
"""

SQL_TABLE = (
    "{{ config(materialized='table', file_format='parquet') }}\nselect * from {{ ref('src') }}\n"
)
PY_TABLE = (
    "def model(dbt, session):\n"
    '    dbt.config(materialized="table", file_format="parquet")\n'
    '    return dbt.ref("src")\n'
)
SQL_MUTABLE = (
    "{{ config(materialized='mutable_table', file_format='parquet', primary_key=['id']) }}\n"
    "select id, name, price from {{ ref('src') }}\n"
)
PY_MUTABLE = (
    "def model(dbt, session):\n"
    '    dbt.config(materialized="mutable_table", file_format="parquet", primary_key=["id"])\n'
    '    return dbt.ref("src").select("id", "name", "price")\n'
)

MODELS = {
    "src.sql": SOURCE,
    "sql_table.sql": SQL_TABLE,
    "py_table.py": PY_TABLE,
    "sql_mutable.sql": SQL_MUTABLE,
    "py_mutable.py": PY_MUTABLE,
}


def execution_of(project: Path, model: str) -> tuple[float, int]:
    """dbt's execution seconds of one model's run, and the statements it sent."""
    run = dbt_run(project, "run", "--select", model)
    return run.execution, len(run.statements)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="jammi-bench-python-"))
    try:
        project = workdir / "project"
        (project / "models").mkdir(parents=True)
        write_project(project, "bench_python_models", workdir / "state")
        for name, text in MODELS.items():
            (project / "models" / name).write_text(text)
        dbt_run(project, "run")  # build everything once (JVM start, first runs)
        for kind in ("table", "mutable"):
            times: dict[str, list[float]] = {"sql": [], "py": []}
            counts: dict[str, int] = {}
            for round_number in range(args.rounds):
                order = ("sql", "py") if round_number % 2 == 0 else ("py", "sql")
                for language in order:
                    seconds, statements = execution_of(project, f"{language}_{kind}")
                    times[language].append(seconds)
                    counts[language] = statements
            ours, baseline = statistics.median(times["py"]), statistics.median(times["sql"])
            report(
                f"python_{kind}_fixed_cost",
                10,
                ours,
                baseline,
                "a Python model costs about what the same model in SQL does",
                statements_python=counts["py"],
                statements_sql=counts["sql"],
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
