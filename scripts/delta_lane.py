"""Run the feature tests with file_format delta wherever Delta Lake can be loaded.

Delta's Spark jars come from Maven Central (spark.jars.packages) or from local jars
named in JAMMI_DELTA_JARS. When neither works, the lane is skipped with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import os
from pyspark.sql import SparkSession
b = (SparkSession.builder.master('local[1]')
     .config('spark.sql.extensions', 'io.delta.sql.DeltaSparkSessionExtension')
     .config('spark.sql.catalog.spark_catalog',
             'org.apache.spark.sql.delta.catalog.DeltaCatalog'))
jars = os.environ.get('JAMMI_DELTA_JARS')
pkg = os.environ.get('JAMMI_DELTA_PACKAGES', 'io.delta:delta-spark_2.12:3.2.1')
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


def main() -> int:
    problem = delta_problem()
    if problem:
        print(f"delta lane SKIPPED: Delta Lake is not available on this machine ({problem})")
        return 0
    env = dict(os.environ, JAMMI_TEST_FILE_FORMAT="delta")
    # dbt_spark_suite: dbt-spark's own macros, nothing Delta changes; run once, in `make
    # functional`.
    only = "not thrift and not dbt_spark_suite"
    tests = ["tests/functional", "-q", "-p", "no:cacheprovider", "-m", only]
    print("delta lane: running functional tests with file_format=delta")
    return subprocess.call([sys.executable, "-m", "pytest", *tests], env=env)


if __name__ == "__main__":
    sys.exit(main())
