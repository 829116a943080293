"""Capture the printed plans the tenant guard's text reader is tested on (golden files).

    .venv-spark35/bin/python -m tests.capture_plans parquet # Spark 3.5 (make spark35-venv)
    .venv-spark35/bin/python -m tests.capture_plans delta   # after `make jars`
    .venv-spark35/bin/python -m tests.capture_plans iceberg
    .venv-spark43/bin/python -m tests.capture_plans parquet # Spark 4.3 (make spark43-venv)
    .venv/bin/python -m tests.capture_plans delta           # the home line, Spark 4.1
    .venv/bin/python -m tests.capture_plans iceberg

For each case of tests/unit/tenancy/plan_cases.py that the format runs, the text of
``EXPLAIN EXTENDED <sql>`` (what a Thrift or Connect server prints, and what
``tenancy/plan_text.py`` reads) goes to tests/unit/tenancy/plans/<spark>-<format>/<case>.txt;
for a MERGE that Delta prints on one line, also the plans of its two operands
(``<case>.target.txt``, ``<case>.source.txt``), which the reader analyzes instead. Run
it again when a Spark, Delta or Iceberg release changes (jar_releases.py), and commit
what changed; the unit tests read the files without Spark.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from dbt.adapters.jammi.engine.jar_releases import installed_pyspark_version
from dbt.adapters.jammi.tenancy.merge_operands import merge_operands
from dbt.adapters.jammi.tenancy.plan_text import root_command
from dbt.adapters.jammi.tenancy.statement_plans import INLINE_MERGE
from tests.conftest import session_parameters
from tests.unit.tenancy.plan_cases import CASES, ENGINES

REPO = Path(__file__).resolve().parent.parent

PLANS = REPO / "tests" / "unit" / "tenancy" / "plans"


def session(file_format: str, state: Path):
    from iceberg_probe import SINGLE_WRITER_CONFS  # scripts/ (tests.conftest's sys.path)
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", str(state / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={state}")
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={state}/metastore_db;create=true",
        )
    )
    # one writer here: Iceberg's commits need no Hive lock tables in this metastore
    single_writer = SINGLE_WRITER_CONFS if file_format == "iceberg" else {}
    for key, value in {**session_parameters(file_format), **single_writer}.items():
        builder = builder.config(key, value)
    return builder.enableHiveSupport().getOrCreate()


def explain(spark, sql: str) -> str:
    return "\n".join(str(row[0]) for row in spark.sql("explain extended " + sql).collect())


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("parquet", "delta", "iceberg"):
        print(__doc__)
        return 2
    file_format = argv[0]
    line = "4" if installed_pyspark_version().startswith("4.") else "3.5"
    folder = next(name for name, spark, fmt in ENGINES if (spark, fmt) == (line, file_format))
    target = PLANS / folder
    state = Path(tempfile.mkdtemp(prefix="jammi-plans-"))
    os.chdir(state)
    spark = session(file_format, state)
    try:
        spark.sql("create database d")
        spark.sql(f"create table d.t (sku string, price int, tenant_id string) using {file_format}")
        spark.sql(
            "create table d.__topic_x (_offset bigint, op string, tenant_id string) "
            f"using {file_format}"
        )
        spark.sql("create view d.v as select _offset, op, tenant_id from d.__topic_x")
        spark.sql(f"create table d.sink (sku string) using {file_format}")
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for case in CASES:
            if file_format not in case.formats:
                continue
            sql = case.sql.format(fmt=file_format)
            text = explain(spark, sql)
            (target / f"{case.name}.txt").write_text(text + "\n")
            if root_command(text) == INLINE_MERGE:
                for role, operand in zip(("target", "source"), merge_operands(sql)):
                    operand_text = explain(spark, f"select * from {operand}")
                    (target / f"{case.name}.{role}.txt").write_text(operand_text + "\n")
        (target / "VERSION").write_text(
            f"pyspark {installed_pyspark_version()}; "
            f"{session_parameters(file_format).get('spark.jars.packages', file_format)}\n"
        )
    finally:
        spark.stop()
        shutil.rmtree(state, ignore_errors=True)
    print(f"capture_plans: {len(list(target.glob('*.txt')))} plans in {target.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
