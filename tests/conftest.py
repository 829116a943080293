"""Shared test configuration.

Functional tests run on one embedded Spark session per pytest process. The Spark
metastore and warehouse live in one temporary directory for the whole process, so every
test class shares the same JVM and its Hive metastore (dbt-tests-adapter gives each
class its own schema).

Lanes, chosen with environment variables (the Makefile sets them):
- JAMMI_TEST_FILE_FORMAT=parquet|delta  the format feature tests configure (default parquet)
- JAMMI_TEST_METHOD=session|thrift      how dbt connects (thrift: JAMMI_THRIFT_HOST/PORT)
"""

from __future__ import annotations

import os
import tempfile

import pytest

from dbt.adapters.jammi.delta_release import installed_pyspark_version, package_for

pytest_plugins = ["dbt.tests.fixtures.project"]

_STATE_DIR = tempfile.mkdtemp(prefix="jammi-spark-")

DELTA_PARAMETERS = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # Delta's own test settings: a snapshot's log replay in 2 tasks, not 50 (tiny
    # tables on 2 cores spend most of a statement scheduling those tasks).
    "spark.databricks.delta.snapshotPartitions": "2",
}


def test_file_format() -> str:
    return os.environ.get("JAMMI_TEST_FILE_FORMAT", "parquet")


def test_method() -> str:
    return os.environ.get("JAMMI_TEST_METHOD", "session")


# Helpers, not tests: keep pytest from collecting them where they are imported.
test_file_format.__test__ = False  # type: ignore[attr-defined]
test_method.__test__ = False  # type: ignore[attr-defined]
lane_file_format = test_file_format
lane_method = test_method


def jammi_profile_target() -> dict:
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
    params = {"spark.master": "local[2]", "spark.sql.shuffle.partitions": "4"}
    if test_file_format() == "delta":
        params.update(DELTA_PARAMETERS)
        jars = os.environ.get("JAMMI_DELTA_JARS")
        if jars:
            params["spark.jars"] = jars
        else:
            params["spark.jars.packages"] = os.environ.get("JAMMI_DELTA_PACKAGES") or package_for(
                installed_pyspark_version()
            )
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


# Tests that read Spark through a SparkSession in the pytest process (or the local file
# system under the warehouse) can only see the embedded session's state; on the thrift
# lane they are skipped with this reason instead of failing. Mark them
# @pytest.mark.session_only.
def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "session_only: reads Spark state in-process or on the local file system; "
        "skipped with JAMMI_TEST_METHOD=thrift",
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


def pytest_collection_modifyitems(config, items):
    if test_file_format() == "delta":
        # The parquet param of a class parametrized over formats (`fmt`) already ran on
        # the default lane; the Delta lane runs its delta param only. Tests marked
        # parquet_only (their models pin parquet) ran there too.
        parquet = [i for i in items if _param(i, "fmt") == "parquet" or _parquet_only(i)]
        if parquet:
            config.hook.pytest_deselected(items=parquet)
            items[:] = [i for i in items if i not in parquet]
    if test_method() != "thrift":
        return
    skip = pytest.mark.skip(reason="session_only: needs the embedded session in this process")
    for item in items:
        if item.get_closest_marker("session_only"):
            item.add_marker(skip)


def _parquet_only(item) -> bool:
    return item.get_closest_marker("parquet_only") is not None


def _param(item, name: str):
    callspec = getattr(item, "callspec", None)
    return callspec.params.get(name) if callspec else None
