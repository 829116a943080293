"""Run the feature tests with file_format delta wherever Delta Lake can be loaded.

Delta's Spark jars, fetched by `make jars` (scripts/fetch_jars.py, a prerequisite of
this lane):
- JAMMI_DELTA_JARS=/path/a.jar,/path/b.jar (or a directory holding the jars), an
  override: the sessions load these files with spark.jars;
- else Maven coordinates in the profile (spark.jars.packages), as README tells users:
  JAMMI_DELTA_PACKAGES, default the release for the installed Spark line
  (dbt/adapters/jammi/engine/jar_releases.py), which Spark's resolver finds in the
  local Maven repository (~/.m2/repository) that `make jars` filled.
When Delta cannot be loaded the lane is skipped with the reason -- or fails, with
JAMMI_DELTA_REQUIRED=1 (CI sets it: a skipped lane never counts as passing there).

Only the tests that configure a file format run here (the feature tests and the Delta
suites); a class parametrized over formats runs its delta param only (tests/conftest.py).
tests/functional/adapter/test_delta_from_maven.py checks that coordinates resolve from
the local Maven repository with the network shut off.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fetch_jars import jars_dir  # scripts/ is this script's directory
from lane_map import GATE_SLICES, gate_slice_name

from dbt.adapters.jammi.engine.jar_releases import (
    delta_release,
    installed_pyspark_version,
    package_for,
)

PROBE = """
import os
from pyspark.sql import SparkSession
b = (SparkSession.builder.master('local[1]')
     .config('spark.sql.extensions', 'io.delta.sql.DeltaSparkSessionExtension')
     .config('spark.sql.catalog.spark_catalog',
             'org.apache.spark.sql.delta.catalog.DeltaCatalog'))
jars = os.environ.get('JAMMI_DELTA_JARS')
pkg = os.environ.get('JAMMI_DELTA_PACKAGES', '')
b = b.config('spark.jars', jars) if jars else b.config('spark.jars.packages', pkg)
s = b.getOrCreate()
s.sql('create table probe_delta (id int) using delta location "' + os.environ['PROBE_DIR'] + '"')
"""


def delta_problem() -> str | None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PROBE_DIR=os.path.join(tmp, "t"))
        try:
            run = subprocess.run(
                [sys.executable, "-c", PROBE],
                capture_output=True,
                text=True,
                timeout=240,
                env=env,
                cwd=tmp,
            )
        except subprocess.TimeoutExpired:
            return "starting Spark with Delta Lake timed out (jars not reachable?)"
    if run.returncode != 0:
        lines = [ln for ln in run.stderr.splitlines() if "rror" in ln or "Exception" in ln]
        return (lines[0] if lines else run.stderr.strip()[-300:])[:300]
    return None


TESTS = [
    "tests/functional/mutable_table",
    "tests/functional/scd2",
    "tests/functional/topic",
    "tests/functional/adapter/test_delta_suites.py",
    "tests/functional/adapter/test_delta_from_maven.py",
    "tests/functional/snapshots",  # dbt snapshots' hard deletes
    # Python models: dbt-spark's incremental merge needs Delta (skipped on parquet)
    "tests/functional/python_models/test_python_models.py",
]


def local_jars(setting: str | None) -> str | None:
    """The comma-separated jar list for spark.jars and spark-submit's --jars:
    JAMMI_DELTA_JARS (files, or a directory of jars), else the .jars/ folder of the
    installed Spark line's Delta release when `make jars` filled it, else None."""
    if setting:
        path = Path(setting)
        return ",".join(str(j) for j in sorted(path.glob("*.jar"))) if path.is_dir() else setting
    release = delta_release(installed_pyspark_version())
    if release is None or release.jars_dir is None:
        return None
    folder = jars_dir(release)
    jars = sorted(folder.glob("*.jar")) if folder.is_dir() else []
    return ",".join(str(j) for j in jars) or None


def main(argv: list[str]) -> int:
    gate = "--gate" in argv  # the gate's Delta slice (lane_map.GATE_SLICES), not every test
    spark = installed_pyspark_version()
    if delta_release(spark) is None and not os.environ.get("JAMMI_DELTA_JARS"):
        print(f"delta lane SKIPPED: no Delta Lake release is known for PySpark {spark}")
        return 1 if os.environ.get("JAMMI_DELTA_REQUIRED") == "1" else 0
    override = os.environ.get("JAMMI_DELTA_JARS")
    if override:
        os.environ["JAMMI_DELTA_JARS"] = jars = str(local_jars(override))
        source = f"jars {jars}"
    else:
        package = os.environ.get("JAMMI_DELTA_PACKAGES") or package_for(spark)
        os.environ["JAMMI_DELTA_PACKAGES"] = package
        source = f"Maven coordinates {package}, spark.jars.packages"
    # Where Delta is required (CI, `make`'s default) no probe JVM runs first: the tests
    # themselves fail where Delta cannot load. The probe only decides whether to skip.
    required = os.environ.get("JAMMI_DELTA_REQUIRED") == "1"
    problem = None if required else delta_problem()
    if problem:
        print(f"delta lane SKIPPED: Delta Lake is not available on this machine ({problem})")
        return 1 if os.environ.get("JAMMI_DELTA_REQUIRED") == "1" else 0
    env = dict(os.environ, JAMMI_TEST_FILE_FORMAT="delta")
    only = "not thrift and not dbt_spark_suite"
    # test paths on the command line: only those
    named = [a for a in argv if not a.startswith("--")]
    selected = named or (GATE_SLICES[gate_slice_name("delta", spark)] if gate else TESTS)
    tests = [*selected, "-q", "-rs", "-p", "no:cacheprovider", "--durations=10", "-m", only]
    print(
        f"delta lane: {'the gate slice of ' if gate else ''}the feature tests with "
        f"file_format=delta (PySpark {spark}, {source})"
    )
    return subprocess.call([sys.executable, "-m", "pytest", *tests], env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
