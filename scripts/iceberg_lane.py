"""Run the Iceberg path of the feature tests with file_format iceberg.

Iceberg's Spark runtime, fetched by `make jars` (scripts/fetch_jars.py, a prerequisite
of this lane):
- JAMMI_ICEBERG_JARS=/path/a.jar (or a directory holding the jar), an override: the
  sessions load these files with spark.jars;
- else Maven coordinates in the profile (spark.jars.packages), as README tells users:
  JAMMI_ICEBERG_PACKAGES, default the runtime for the installed Spark line
  (dbt/adapters/jammi/engine/jar_releases.py), which Spark's resolver finds in the local
  Maven repository (~/.m2/repository) that `make jars` filled.
The sessions use Iceberg's SparkSessionCatalog over the embedded Hive metastore
(scripts/iceberg_probe.py ICEBERG_CONFS). When Iceberg cannot be loaded the lane is
skipped with the reason -- or fails, with JAMMI_ICEBERG_REQUIRED=1 (a skipped lane never
counts as passing in CI).

Only the tests of the Iceberg path run here (TESTS): the classes parametrized over
formats (`fmt`; their iceberg param only, tests/conftest.py), commit conflicts, kept
versions, scd2, topics, `file_format: auto`, the refusals, and merge-on-read tables with
snapshot expiry. `--rest` runs REST_TESTS with the sessions' default catalog an Iceberg
REST catalog server instead (scripts/iceberg_rest_catalog.py). Tests marked
`iceberg_lane_skip` (the planner's own decisions, which the default lane already runs
the same on every format) and `iceberg_refused` (tests/conftest.py) are deselected.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from fetch_jars import jars_dir  # scripts/ is this script's directory
from lane_map import GATE_SLICES, gate_slice_name

from dbt.adapters.jammi.engine.jar_releases import (
    iceberg_package_for,
    iceberg_release,
    installed_pyspark_version,
)

PROBE = """
import os, sys
sys.path.insert(0, os.path.join(os.environ['REPO'], 'scripts'))
from pyspark.sql import SparkSession
from iceberg_probe import ICEBERG_CONFS, SINGLE_WRITER_CONFS
state = os.environ['PROBE_DIR']
b = (SparkSession.builder.master('local[1]')
     .config('spark.sql.warehouse.dir', state + '/warehouse')
     .config('spark.driver.extraJavaOptions', '-Dderby.system.home=' + state)
     .config('spark.hadoop.javax.jdo.option.ConnectionURL',
             'jdbc:derby:;databaseName=' + state + '/metastore_db;create=true'))
for key, value in {**ICEBERG_CONFS, **SINGLE_WRITER_CONFS}.items():
    b = b.config(key, value)
jars = os.environ.get('JAMMI_ICEBERG_JARS')
pkg = os.environ.get('JAMMI_ICEBERG_PACKAGES', '')
b = b.config('spark.jars', jars) if jars else b.config('spark.jars.packages', pkg)
s = b.enableHiveSupport().getOrCreate()
s.sql('create table probe_iceberg (id int) using iceberg')
s.sql('insert into probe_iceberg values (1)')
assert s.sql('select count(*) from probe_iceberg').collect()[0][0] == 1
"""

REPO = Path(__file__).resolve().parent.parent

# The Iceberg path: the MERGE applier's feature tests (their iceberg param; tests/conftest.py
# deselects the other formats' params and the `iceberg_refused` tests), the commit
# conflict re-plan, kept versions on snapshots, scd2, topics stored in Iceberg, `auto`,
# the refusals, merge-on-read tables, snapshot expiry, exact casts and redelivery. The rest of
# tests/functional/mutable_table is the planner's and the rewrite applier's, the same on
# every format, and runs on the default and Delta lanes.
MUTABLE = "tests/functional/mutable_table"
TESTS = [
    f"{MUTABLE}/test_mutable_upsert.py",
    f"{MUTABLE}/test_mutable_schema_and_indexes.py",
    f"{MUTABLE}/test_merge_functions.py",
    f"{MUTABLE}/test_ttl.py",
    f"{MUTABLE}/test_mutable_tenants.py",
    f"{MUTABLE}/test_tenant_read_guard.py",
    f"{MUTABLE}/test_versions.py",
    f"{MUTABLE}/test_delta_merge_conflicts.py",
    f"{MUTABLE}/test_file_format_auto.py",
    f"{MUTABLE}/test_iceberg_refusals.py",
    f"{MUTABLE}/test_iceberg_merge_on_read.py",
    f"{MUTABLE}/test_run_results.py",
    f"{MUTABLE}/test_exact_casts.py",  # what Iceberg stores of each type
    f"{MUTABLE}/test_redelivery.py",  # a MERGE's rejected duplicates, then collapsed
    f"{MUTABLE}/test_adoption.py",  # an Iceberg table adopted in place
    f"{MUTABLE}/test_schema_evolution.py",  # Iceberg's type promotion, nested add, drop
    f"{MUTABLE}/test_tombstones.py",  # deletes stay deleted: the branch commit
    f"{MUTABLE}/test_truncates.py",  # a truncate's deletes and tombstones: the branch commit
    f"{MUTABLE}/test_rule_columns.py",  # the reserved version column, the changelog's names
    f"{MUTABLE}/test_version_groups.py",  # each value guarded by its group: the MERGE
    f"{MUTABLE}/test_hive_adoption.py",  # a Hive table's rows rewritten as Iceberg
    f"{MUTABLE}/test_identity_column.py",  # its high-water mark: the branch commit
    f"{MUTABLE}/test_changelog.py",  # its records: the branch commit
    "tests/functional/scd2/test_scd2_history.py",
    "tests/functional/topic/test_topic_publish.py",
    "tests/functional/topic/test_topic_consumers.py",
    "tests/functional/topic/test_topic_retention.py",
    "tests/functional/topic/test_topic_concurrency.py",  # the MERGE claim, raced
    "tests/functional/adapter/test_session.py",
    "tests/functional/adapter/test_iceberg_table_model.py",
    "tests/functional/snapshots/test_snapshot_hard_deletes.py",  # dbt snapshots on Iceberg
]

# The catalog service slice (`--rest`, after the Hive catalog's run in `make iceberg-lane`):
# the same sessions with Iceberg's REST catalog server as their default catalog
# (scripts/iceberg_rest_catalog.py): upserts, the branch commit's tombstones and identity
# numbers, kept versions with their rollback and snapshot expiry, topics (their registry,
# offsets and consumers in Iceberg tables), and what differs there (a changelog is refused).
REST_TESTS = [
    f"{MUTABLE}/test_mutable_upsert.py",
    f"{MUTABLE}/test_tombstones.py",
    f"{MUTABLE}/test_identity_column.py",
    f"{MUTABLE}/test_versions.py",
    "tests/functional/adapter/test_iceberg_catalog_service.py",  # auto, drop schema, topics
    "tests/functional/topic/test_topic_concurrency.py",  # the registry and offset MERGEs
    "tests/process/test_rest_catalog_races.py",  # two sessions' JVMs racing on the catalog
]

# Deselected: the Thrift-only tests and the planner-only tests of the files above that the
# default and Delta lanes already run the same (`iceberg_lane_skip`).
ONLY = "not thrift and not iceberg_lane_skip"


def iceberg_problem() -> str | None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PROBE_DIR=os.path.join(tmp, "state"), REPO=str(REPO))
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
            return "starting Spark with Iceberg timed out (jars not reachable?)"
    if run.returncode != 0:
        lines = [ln for ln in run.stderr.splitlines() if "rror" in ln or "Exception" in ln]
        return (lines[0] if lines else run.stderr.strip()[-300:])[:300]
    return None


def local_jars(setting: str) -> str:
    """The comma-separated jar list for spark.jars: JAMMI_ICEBERG_JARS's files, or the
    jars of the directory it names."""
    path = Path(setting)
    return ",".join(str(j) for j in sorted(path.glob("*.jar"))) if path.is_dir() else setting


def skipped(reason: str) -> int:
    print(f"iceberg lane SKIPPED: {reason}")
    return 1 if os.environ.get("JAMMI_ICEBERG_REQUIRED") == "1" else 0


def main(argv: list[str]) -> int:
    gate = "--gate" in argv  # the gate's Iceberg slice (lane_map.GATE_SLICES)
    rest = "--rest" in argv  # REST_TESTS on a REST catalog server
    spark = installed_pyspark_version()
    override = os.environ.get("JAMMI_ICEBERG_JARS")
    release = iceberg_release(spark)
    if release is None and not override:
        return skipped(f"no Iceberg runtime is known for PySpark {spark}")
    if override:
        os.environ["JAMMI_ICEBERG_JARS"] = jars = local_jars(override)
        source = f"jars {jars}"
    else:
        package = os.environ.get("JAMMI_ICEBERG_PACKAGES") or iceberg_package_for(spark)
        os.environ["JAMMI_ICEBERG_PACKAGES"] = package
        fetched = release is not None and jars_dir(release).is_dir()
        source = f"Maven coordinates {package}, spark.jars.packages" + (
            "" if fetched else " (not fetched: run `make jars`)"
        )
    # Where Iceberg is required (CI, `make`'s default) no probe JVM runs first: the tests
    # themselves fail where Iceberg cannot load. The probe only decides whether to skip.
    required = os.environ.get("JAMMI_ICEBERG_REQUIRED") == "1"
    problem = None if required else iceberg_problem()
    if problem:
        return skipped(f"Iceberg is not available on this machine ({problem})")
    env = dict(os.environ, JAMMI_TEST_FILE_FORMAT="iceberg")
    slice_name = gate_slice_name("iceberg", spark)
    # test paths on the command line: only those
    named = [a for a in argv if not a.startswith("--")]
    selected = named or (REST_TESTS if rest else GATE_SLICES[slice_name] if gate else TESTS)
    tests = [*selected, "-q", "-rs", "-p", "no:cacheprovider", "--durations=10", "-m", ONLY]
    print(
        f"iceberg lane: {'the gate slice of ' if gate else ''}the feature tests with "
        f"file_format=iceberg (PySpark {spark}, {source})"
        + (", the default catalog an Iceberg REST catalog server" if rest else "")
    )
    pytest = [sys.executable, "-m", "pytest", *tests]
    if rest:  # the server for the run, its URI in JAMMI_ICEBERG_REST_URI (tests/conftest.py)
        pytest = [
            sys.executable,
            str(REPO / "scripts" / "iceberg_rest_catalog.py"),
            "run",
            "--",
        ] + (pytest)
    return subprocess.call(pytest, env=env, cwd=REPO)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
