"""Version directories of rewrite-applied (parquet/orc) mutable tables.

Listing and removing directories needs a file system client. With the embedded session
(``method: session``) the driver runs in this process, so Hadoop's FileSystem is reached
through the session's JVM and works for every scheme the session can write to (file:,
hdfs:, s3a:, abfss:, ...). Remote connections (thrift/http/odbc) have no client-side
file system access: cleanup is skipped there and reported in the log instead.
"""

from __future__ import annotations

from typing import Any, Optional


def _session() -> Optional[Any]:
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return None
    return SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()


def _fs_and_path(path: str) -> tuple[Any, Any]:
    spark = _session()
    if spark is None:  # pragma: no cover
        raise RuntimeError("no Spark session in this process")
    jvm = spark._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark._jsc.hadoopConfiguration()), hpath


def list_children(path: str) -> list[str]:
    """Directories directly under ``path`` (empty when it does not exist)."""
    fs, hpath = _fs_and_path(path)
    if not fs.exists(hpath):
        return []
    return [str(s.getPath().toString()) for s in fs.listStatus(hpath) if s.isDirectory()]


def remove(path: str) -> bool:
    fs, hpath = _fs_and_path(path)
    if not fs.exists(hpath):
        return False
    return bool(fs.delete(hpath, True))


def exists(path: str) -> bool:
    fs, hpath = _fs_and_path(path)
    return bool(fs.exists(hpath))


def remove_if_empty(path: str) -> bool:
    """Remove a directory that holds nothing (a table's base after a failed first run)."""
    fs, hpath = _fs_and_path(path)
    if not fs.exists(hpath) or len(fs.listStatus(hpath)) > 0:
        return False
    return bool(fs.delete(hpath, False))


def partition_locations(schema: str, table: str) -> list[str]:
    """Locations of every partition of a table, from the session's catalog."""
    spark = _session()
    if spark is None:  # pragma: no cover
        raise RuntimeError("no Spark session in this process")
    jvm = spark._jvm
    catalog = spark._jsparkSession.sharedState().externalCatalog()
    partitions = catalog.listPartitions(schema.lower(), table.lower(), jvm.scala.Option.empty())
    iterator = partitions.iterator()
    locations = []
    while iterator.hasNext():
        locations.append(str(iterator.next().location().toString()))
    return locations
