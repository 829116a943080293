"""The lanes' Thrift server settings per Spark line (scripts/spark_thrift_server.py): on
Spark 4 Hive's lock handler must pool with DBCP, the pool Spark 4's jars hold, both in
the server and in the JVM that creates Hive's lock tables before it starts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))
import spark_thrift_server  # noqa: E402

from dbt.adapters.jammi.engine import jar_releases  # noqa: E402

POOL = "spark.hadoop.datanucleus.connectionPoolingType"


@pytest.mark.parametrize("version, pool", [("4.1.4", "DBCP"), ("4.3.0", "DBCP"), ("3.5.7", None)])
def test_an_iceberg_server_pools_hive_locks_as_its_spark_line_can(monkeypatch, version, pool):
    monkeypatch.setattr(jar_releases, "installed_pyspark_version", lambda: version)
    confs = spark_thrift_server.table_format_confs("iceberg")
    assert confs.get(POOL) == pool
    assert confs["spark.sql.catalog.spark_catalog"].endswith("SparkSessionCatalog")
    assert "spark.hadoop.iceberg.engine.hive.lock-enabled" not in confs  # locked: the default


def test_a_delta_server_takes_deltas_catalog():
    confs = spark_thrift_server.table_format_confs("delta")
    assert confs["spark.sql.catalog.spark_catalog"].endswith("DeltaCatalog")
    assert POOL not in confs
