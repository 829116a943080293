"""Shared test configuration.

Functional tests run on one embedded Spark session per pytest process. The Spark
metastore and warehouse live in one temporary directory for the whole process, so every
test class shares the same JVM and its Hive metastore (dbt-tests-adapter gives each
class its own schema).

Lanes, chosen with environment variables (the Makefile sets them):
- JAMMI_TEST_FILE_FORMAT=parquet|orc|delta|iceberg  the format feature tests configure
                                        (default parquet; orc takes parquet's place in the
                                        rewrite applier's classes, `make orc-lane`); delta
                                        and iceberg load their runtime
                                        (JAMMI_DELTA_JARS / JAMMI_ICEBERG_JARS: jar files
                                        instead of Maven coordinates)
- JAMMI_ICEBERG_REST_URI=http://...     with iceberg: the sessions' default catalog is that
                                        Iceberg REST catalog, not the Hive session catalog
                                        (scripts/iceberg_rest_catalog.py serves one)
- JAMMI_TEST_METHOD=session|thrift|connect  how dbt connects (thrift: JAMMI_THRIFT_HOST/PORT;
                                        connect: JAMMI_CONNECT_URL, scripts/connect_server.py)
- JAMMI_TEST_ANSI=true|false            the embedded session's `spark.sql.ansi.enabled`, set
                                        in the profile and asserted after every test that
                                        used it (`make spark43-features` runs with true;
                                        method: session only)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Optional

import pytest

from dbt.adapters.jammi.engine.jar_releases import (
    HOME_LINE,
    iceberg_package_for,
    installed_pyspark_version,
    package_for,
    spark_line,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from hive_lock_tables import ensure_lock_tables  # noqa: E402  (scripts/)
from iceberg_probe import iceberg_confs  # noqa: E402  (scripts/: Iceberg's session settings)
from iceberg_rest_catalog import URI_VARIABLE, rest_catalog_confs  # noqa: E402  (scripts/)

pytest_plugins = ["dbt.tests.fixtures.project"]

_STATE_DIR = tempfile.mkdtemp(prefix="jammi-spark-")

# The short-lived JVMs of the process tests (each dbt process's embedded session, alive
# for one run) run tiny tables: the client compiler only (C1; the optimizing C2 spends
# more CPU than such runs get back) and the serial collector. Measured on 2 cores: one
# functional module's Spark JVM used 78 s of CPU without them and 47 s with them. Not
# for JVMs that serve a whole lane (a lane's pytest session, a Thrift server and its
# executors): with C1 only, the Thrift lane's races took 87 s instead of 68 (and the
# functional lane 13.8 minutes against 10.2, though a benchmark ran beside it). Results
# do not depend on either.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

DELTA_PARAMETERS = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # Delta's own test settings: a snapshot's log replay in 2 tasks, not 50 (tiny
    # tables on 2 cores spend most of a statement scheduling those tasks).
    "spark.databricks.delta.snapshotPartitions": "2",
}

# Per lane format: (session settings, jar-file override variable, coordinates variable,
# the installed Spark line's coordinates).
LANE_RUNTIMES = {
    "delta": (DELTA_PARAMETERS, "JAMMI_DELTA_JARS", "JAMMI_DELTA_PACKAGES", package_for),
    "iceberg": (
        # Iceberg's SparkSessionCatalog over the embedded Hive metastore
        iceberg_confs(installed_pyspark_version()),
        "JAMMI_ICEBERG_JARS",
        "JAMMI_ICEBERG_PACKAGES",
        iceberg_package_for,
    ),
}

# The lane formats that commit through the MERGE applier (not the rewrite applier).
MERGE_LANE_FORMATS = ("delta", "iceberg")


def test_file_format() -> str:
    return os.environ.get("JAMMI_TEST_FILE_FORMAT", "parquet")


def test_method() -> str:
    return os.environ.get("JAMMI_TEST_METHOD", "session")


ANSI = "spark.sql.ansi.enabled"


def lane_ansi() -> Optional[str]:
    """The ANSI mode the lane asks for (JAMMI_TEST_ANSI), or None: the session's default."""
    value = os.environ.get("JAMMI_TEST_ANSI", "").strip().lower()
    if value and value not in ("true", "false"):
        raise pytest.UsageError(f"JAMMI_TEST_ANSI must be true or false, not {value!r}")
    return value or None


# Helpers, not tests: keep pytest from collecting them where they are imported.
test_file_format.__test__ = False  # type: ignore[attr-defined]
test_method.__test__ = False  # type: ignore[attr-defined]


def remote_method() -> bool:
    """dbt reaches a server (thrift, connect): no Spark state in this process."""
    return test_method() in ("thrift", "connect")


def lane_connect_url() -> str:
    """The connect lane's server (scripts/connect_server.py sets JAMMI_CONNECT_URL)."""
    return os.environ.get("JAMMI_CONNECT_URL", "sc://127.0.0.1:15002")


lane_file_format = test_file_format
lane_method = test_method


def rest_catalog_uri() -> str:
    """The Iceberg REST catalog the lane serves (scripts/iceberg_rest_catalog.py), or ''."""
    return os.environ.get(URI_VARIABLE, "")


def session_parameters(file_format: str) -> dict:
    """An embedded session's settings that load ``file_format`` (delta, iceberg; {} for
    the others): its extension and catalog, and its jars -- the jar-file override
    (JAMMI_DELTA_JARS / JAMMI_ICEBERG_JARS) when set, else Maven coordinates (the
    coordinates variable, default the release for the installed Spark) that Spark
    resolves from the local Maven repository `make jars` filled."""
    runtime = LANE_RUNTIMES.get(file_format)
    if runtime is None:
        return {}
    settings, jars_variable, packages_variable, coordinates = runtime
    params = dict(settings)
    if file_format == "iceberg" and rest_catalog_uri():
        # the Iceberg lane's catalog service slice: the REST catalog as the default catalog
        params = rest_catalog_confs(rest_catalog_uri())
    jars = os.environ.get(jars_variable)
    if jars:
        params["spark.jars"] = jars
    else:
        params["spark.jars.packages"] = os.environ.get(packages_variable) or coordinates(
            installed_pyspark_version()
        )
    return params


def jammi_profile_target() -> dict:
    if test_method() == "connect":
        return {
            "type": "jammi",
            "method": "connect",
            "host": lane_connect_url(),
            "schema": "analytics",
            "threads": 1,
            "connect_timeout": 30,
        }
    if test_method() == "thrift":
        return {
            "type": "jammi",
            "method": "thrift",
            "host": os.environ.get("JAMMI_THRIFT_HOST", "127.0.0.1"),
            "port": int(os.environ.get("JAMMI_THRIFT_PORT", "10000")),
            "schema": "analytics",
            "threads": 1,
            "connect_retries": 3,
            "connect_timeout": 10,
        }
    # One driver JVM serves a lane's whole pytest process (an hour on the Delta lane);
    # Spark's 1g default heap ran out there on Spark 3.5 with Delta 3.3.3
    # (docs/testing.md), so the lanes' sessions get the 2g that bench/harness.py uses.
    params = {
        "spark.master": "local[2]",
        "spark.sql.shuffle.partitions": "4",
        "spark.driver.memory": "2g",
    }
    if lane_ansi():
        params[ANSI] = lane_ansi()
    params.update(session_parameters(test_file_format()))
    return {
        "type": "jammi",
        "method": "session",
        "host": "localhost",
        "schema": "analytics",
        "threads": 1,
        "session_dir": _STATE_DIR,
        "server_side_parameters": params,
    }


@pytest.fixture(scope="class")
def dbt_profile_target():
    return jammi_profile_target()


@pytest.fixture(scope="session", autouse=True)
def _iceberg_lock_tables():
    """On the embedded Iceberg lane, Hive's lock tables in the process's Derby metastore
    before its Spark session opens it: Iceberg's commits hold Hive's table lock, so
    racing writers serialize (scripts/hive_lock_tables.py says why)."""
    if test_file_format() == "iceberg" and test_method() == "session" and not rest_catalog_uri():
        ensure_lock_tables(Path(_STATE_DIR), session_parameters("iceberg"))


# Tests that read Spark through a SparkSession in the pytest process (or the local file
# system under the warehouse) can only see the embedded session's state; on the thrift
# and connect lanes they are skipped with this reason instead of failing. Mark them
# @pytest.mark.session_only.
def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "session_only: reads Spark state in-process or on the local file system; "
        "skipped with JAMMI_TEST_METHOD=thrift or connect",
    )
    config.addinivalue_line(
        "markers",
        "smoke: one quick test per materialization (make test-quick runs only these)",
    )
    config.addinivalue_line(
        "markers",
        "parquet_only: its models pin file_format parquet (the rewrite applier); the "
        "default lane runs it, the Delta lanes deselect it",
    )
    config.addinivalue_line(
        "markers",
        "embedded_parquet_only: the embedded parquet lane on the home line runs it, the "
        "Delta, Iceberg, Thrift and other Spark lines' lanes deselect it: a whole-project "
        "build (their own tests cover its SQL paths), or SQL rendered offline (the same on "
        "every lane)",
    )
    config.addinivalue_line(
        "markers",
        "connection_agnostic: the planner's SQL and results, the same on every connection "
        "method; the Thrift lanes deselect it (the embedded lanes run it)",
    )
    config.addinivalue_line(
        "markers",
        "spark4_path: has a Spark-4-specific path (ANSI-sensitive casts and arithmetic, "
        "Spark 4's types, the plan readers, PySpark 4's error conversion, its DataFrames "
        "and Connect client); make spark43-lane runs these and the smoke tests on the "
        "newest Spark; the home line runs everything",
    )
    config.addinivalue_line(
        "markers",
        "iceberg_refused: its models use an option refused on file_format iceberg "
        "(changelog; tombstones with expire_snapshots; mutable_table/iceberg_support.py): the "
        "Iceberg lane deselects it (test_iceberg_refusals.py proves the refusals)",
    )
    config.addinivalue_line(
        "markers",
        "guard_reader: the tenant guard reading a statement's plan, run once per plan "
        "reader (the embedded lane's JVM reader, the Thrift lane's printed-plan reader); "
        "the Delta and Iceberg lanes and the connect lane deselect it (their printed "
        "plans: tests/unit/tenancy/test_golden_plans.py)",
    )
    config.addinivalue_line(
        "markers",
        "iceberg_lane_skip: the planner's decisions, the same on every MERGE format; the "
        "Delta lane runs it, the Iceberg lane (scripts/iceberg_lane.py) deselects it",
    )


def pytest_collection_modifyitems(config, items):
    deselect = []
    if test_file_format() in MERGE_LANE_FORMATS or remote_method() or not _home_line():
        deselect += [i for i in items if i.get_closest_marker("embedded_parquet_only")]
    if remote_method():
        deselect += [i for i in items if i.get_closest_marker("connection_agnostic")]
    if test_file_format() == "iceberg":
        deselect += [i for i in items if i.get_closest_marker("iceberg_refused")]
    if test_file_format() in MERGE_LANE_FORMATS or test_method() == "connect":
        deselect += [i for i in items if i.get_closest_marker("guard_reader")]
    if deselect:
        config.hook.pytest_deselected(items=deselect)
        items[:] = [i for i in items if i not in deselect]
    if test_file_format() in MERGE_LANE_FORMATS:
        # The other params of a class parametrized over formats (`fmt`) ran on their own
        # lanes; the Delta lane runs its delta param only, the Iceberg lane its iceberg
        # param. Tests marked parquet_only (their models pin parquet) ran on the default.
        lane = test_file_format()
        parquet = [
            i
            for i in items
            if (_param(i, "fmt") is not None and _param(i, "fmt") != lane) or _parquet_only(i)
        ]
        if parquet:
            config.hook.pytest_deselected(items=parquet)
            items[:] = [i for i in items if i not in parquet]
    if not remote_method():
        return
    skip = pytest.mark.skip(reason="session_only: needs the embedded session in this process")
    for item in items:
        if item.get_closest_marker("session_only"):
            item.add_marker(skip)


def _home_line() -> bool:
    """The Spark line constraints.txt installs (jar_releases.HOME_LINE), not the
    compatibility line nor the newest Spark's lane."""
    return spark_line(installed_pyspark_version()) == HOME_LINE


def _parquet_only(item) -> bool:
    return item.get_closest_marker("parquet_only") is not None


def _param(item, name: str):
    callspec = getattr(item, "callspec", None)
    return callspec.params.get(name) if callspec else None


# JAMMI_TEST_ANSI is asserted, not only configured: after every test that used a dbt
# project, the embedded session's own SQL conf (read from the JVM, not through dbt's
# cursor, which re-applies the profile before each statement) must hold the value asked
# for, and once per process an invalid cast must behave as that mode says (raise with
# ANSI on, NULL with it off). A lane that asks for it and never gets to check fails too.
class AnsiCheck:
    def __init__(self) -> None:
        self.checked = 0
        self.problems: list[str] = []
        self.probe: Optional[str] = None

    def after_test(self, expected: str, session) -> Optional[str]:
        """What is wrong with `session` (None: no Spark session), or None if nothing."""
        if session is None:
            return None  # this test never started Spark (a unit test, a parse-only run)
        problem = self._problem(expected, session)
        if problem:
            self.problems.append(problem)
        else:
            self.checked += 1
        return problem

    def _problem(self, expected: str, session) -> Optional[str]:
        actual = str(session.conf.get(ANSI)).lower()
        if actual != expected:
            return f"JAMMI_TEST_ANSI={expected} but the session's {ANSI} is {actual}"
        if self.probe is None:
            self.probe = ansi_probe(session)
        if self.probe != expected:
            return (
                f"JAMMI_TEST_ANSI={expected}, {ANSI}={actual}, but an invalid cast "
                f"behaves as ANSI {self.probe}"
            )
        return None


def active_spark_session():
    """The process's Spark session if one is running (never starts one)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is None:
        return None
    # The session as created, not `builder.getOrCreate()` with options (that would set
    # them, as dbt-spark's cursor does, and hide what the session really holds).
    return SparkSession._instantiatedSession or SparkSession.builder.getOrCreate()


def ansi_probe(session) -> str:
    """'true' when an invalid cast raises (ANSI semantics), 'false' when it gives NULL."""
    try:
        value = session.sql("select cast('jammi' as int) as n").collect()[0][0]
    except Exception as error:  # CAST_INVALID_INPUT (NumberFormatException on 3.5)
        if "CAST_INVALID_INPUT" in str(error) or "NumberFormatException" in str(error):
            return "true"
        raise
    assert value is None, value
    return "false"


_ANSI_CHECK = AnsiCheck()


@pytest.fixture(autouse=True)
def _lane_ansi_is_on(request):
    yield
    expected = lane_ansi()
    if expected is None or "project" not in request.fixturenames:
        return
    problem = _ANSI_CHECK.after_test(expected, active_spark_session())
    if problem:
        pytest.fail(problem, pytrace=False)


def pytest_sessionfinish(session, exitstatus):
    expected = lane_ansi()
    if expected is None or exitstatus != 0 or not session.testscollected:
        return
    if _ANSI_CHECK.checked == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# Seconds per test file (setup, call and teardown of its tests), printed at the end of
# every run: where a lane's minutes go (docs/testing.md).
_FILE_SECONDS: dict[str, float] = {}

# Seconds dbt spends loading the manifest (parsing the project) per invocation in this
# pytest process, printed at the end of every run (docs/testing.md, "dbt's parse cost").
_PARSE_SECONDS: list[float] = []


def _time_manifest_loads() -> None:
    from dbt.parser.manifest import ManifestLoader

    load = ManifestLoader.get_full_manifest.__func__  # type: ignore[attr-defined]
    if getattr(load, "_jammi_timed", False):
        return

    def timed(cls, *args, **kwargs):
        import time

        started = time.perf_counter()
        try:
            return load(cls, *args, **kwargs)
        finally:
            _PARSE_SECONDS.append(time.perf_counter() - started)

    timed._jammi_timed = True  # type: ignore[attr-defined]
    ManifestLoader.get_full_manifest = classmethod(timed)  # type: ignore[method-assign]


_time_manifest_loads()


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    slowest = sorted(_FILE_SECONDS.items(), key=lambda item: -item[1])[:12]
    if slowest and slowest[0][1] >= 1:
        terminalreporter.write_line("slowest files (seconds):")
        for path, seconds in slowest:
            terminalreporter.write_line(f"  {seconds:7.1f}  {path}")
    if _PARSE_SECONDS:
        ordered = sorted(_PARSE_SECONDS)
        terminalreporter.write_line(
            f"dbt parse: {len(ordered)} manifest loads in this process, "
            f"{sum(ordered):.1f} s in all (median {ordered[len(ordered) // 2]:.2f} s, "
            f"max {ordered[-1]:.2f} s)"
        )
    expected = lane_ansi()
    if expected is None:
        return
    import pyspark

    if _ANSI_CHECK.problems:
        terminalreporter.write_line(
            f"ANSI check FAILED after {len(_ANSI_CHECK.problems)} test(s): "
            f"{_ANSI_CHECK.problems[0]}",
            red=True,
        )
        return
    if _ANSI_CHECK.checked == 0:
        terminalreporter.write_line(
            f"ANSI check FAILED: JAMMI_TEST_ANSI={expected} but no test ran on a Spark "
            "session, so nothing was checked",
            red=True,
        )
        return
    terminalreporter.write_line(
        f"ANSI check: {ANSI}={expected} on PySpark {pyspark.__version__} after each of "
        f"{_ANSI_CHECK.checked} tests; cast('jammi' as int) behaved as ANSI {_ANSI_CHECK.probe}"
    )
