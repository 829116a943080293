"""`make iceberg-probe`: does the installed PySpark load its Iceberg runtime?

A smoke test of the release engine/jar_releases.py names for the installed Spark line,
configured by Maven coordinates (resolved from the local Maven repository `make jars`
filled): a local session with Iceberg's SparkSessionCatalog on a Hive metastore (Derby,
in a temporary directory) creates an Iceberg table, inserts two rows and reads them and
its one snapshot back.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from dbt.adapters.jammi.engine.jar_releases import iceberg_release, installed_pyspark_version

ICEBERG_CONFS = {
    "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkSessionCatalog",
    "spark.sql.catalog.spark_catalog.type": "hive",
    # Iceberg's own metastore client: create the embedded Derby schema. Commits hold
    # Hive's table lock (Iceberg's default), whose tables an embedded metastore has only
    # once scripts/hive_lock_tables.py made them.
    "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
    "spark.hadoop.hive.metastore.schema.verification": "false",
    # Iceberg syncs each schema change to the Hive metastore, whose default refuses a
    # struct that gains a field (docs/mutable_table.md, missing and new columns)
    "spark.hadoop.hive.metastore.disallow.incompatible.col.type.changes": "false",
}


def iceberg_confs(spark_version: str) -> dict[str, str]:
    """ICEBERG_CONFS for a Spark version. Hive 2.3's lock handler opens its own
    connection pool, BoneCP by default, which Spark's jars hold no more from Spark 4 on
    (seen on 4.1: NoClassDefFoundError com/jolbox/bonecp/BoneCPConfig at the first lock
    request): there it pools with DBCP, which they hold."""
    if spark_version.split(".")[0] in ("", "3"):
        return dict(ICEBERG_CONFS)
    return {**ICEBERG_CONFS, "spark.hadoop.datanucleus.connectionPoolingType": "DBCP"}


# One writer in one JVM (this probe, the benchmark, `make demo-iceberg`): commit without
# Hive's lock, so no lock tables are needed. Never where writers race: without the lock,
# Spark 3.5's Hive 2.3 metastore lets two racing commits both succeed, and one is lost.
SINGLE_WRITER_CONFS = {"spark.hadoop.iceberg.engine.hive.lock-enabled": "false"}


def main() -> int:
    spark_version = installed_pyspark_version()
    release = iceberg_release(spark_version)
    if release is None:
        print(f"iceberg probe: no Iceberg runtime is known for PySpark {spark_version}")
        return 1
    with tempfile.TemporaryDirectory(prefix="jammi-iceberg-") as state:
        rows, snapshots = probe(release.package, Path(state))
    ok = (rows, snapshots) == (2, 1)
    print(
        f"iceberg probe {'ok' if ok else 'FAILED'}: {release.package} on PySpark "
        f"{spark_version}: {rows} rows, {snapshots} snapshot(s)"
    )
    return 0 if ok else 1


def probe(package: str, state: Path) -> tuple[int, int]:
    """(rows, snapshots) of a two-row Iceberg table created and read back under `state`."""
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[1]")
        .config("spark.jars.packages", package)
        .config("spark.sql.warehouse.dir", str(state / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={state}")
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={state / 'metastore_db'};create=true",
        )
    )
    for key, value in {**ICEBERG_CONFS, **SINGLE_WRITER_CONFS}.items():
        builder = builder.config(key, value)
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sql("create table probe_iceberg (id int) using iceberg")
    spark.sql("insert into probe_iceberg values (1), (2)")
    rows = spark.sql("select count(*) from probe_iceberg").collect()[0][0]
    snapshots = spark.sql(
        "select count(*) from spark_catalog.default.probe_iceberg.snapshots"
    ).collect()[0][0]
    spark.stop()
    return rows, snapshots


if __name__ == "__main__":
    sys.exit(main())
