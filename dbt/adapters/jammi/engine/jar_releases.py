"""Which Delta Lake, Iceberg and Spark Connect releases go with which Spark (the jars
Spark loads).

Delta's and Iceberg's Spark jars are built for one Spark line and one Scala version, so
a session must load the release that matches its PySpark. `make jars`
(scripts/fetch_jars.py) fetches every release with a ``jars_dir`` from Maven Central
into the local Maven repository, where Spark's ``spark.jars.packages`` resolver reads
them first (its ``local-m2-cache``), and copies the jars into ``.jars/<jars_dir>`` for
``spark.jars`` and spark-submit's ``--jars``. The tests, the lanes, the Thrift server
script and the file_format error pick releases here; users copy the coordinates from
docs/compatibility.md's version table.

Why these versions (checked against Maven Central, 2026-12-02; docs/compatibility.md):
- Spark 4.1, the home line: Delta 4.3.1 (``delta-spark_2.13``, built on Spark 4.1) and
  Iceberg 1.12.0 (``iceberg-spark-runtime-4.1_2.13``), the newest runtimes of each; no
  format publishes one for Spark 4.2 or 4.3 yet, so 4.1 is the newest line both run on.
- Spark 3.5, the compatibility line: Delta 3.3.3, the newest 3.x (built on Spark 3.5.6);
  Iceberg 1.12.0's 3.5 runtime.
- Spark Connect's server: for Spark 3.5 a separate artifact of Spark's own release
  (``spark-connect_2.12`` at the pinned PySpark's 3.5.7; the connect lane starts it,
  scripts/connect_server.py); Spark 4 ships it in its distribution and PySpark's jars.
  Delta's Connect server plugin (``delta-connect-server``) is not served by the Maven
  Central this project's machines reach, so Delta over Connect has no release here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class JarRelease:
    """A library's release for one Spark line: the Maven coordinates users put in
    ``spark.jars.packages``, the jars (coordinates) that package puts on Spark's class
    path besides Spark's own, the folder of the repository's jar cache holding them
    (``.jars/<jars_dir>``; None: `make jars` does not fetch it), and whether `make jars`
    fetches the package's Maven dependencies too (what ``spark.jars.packages`` resolves)
    or its own jar only (a jar that only ever reaches Spark as a file, on ``--jars``)."""

    spark_line: str
    package: str
    jars: tuple[str, ...]
    jars_dir: Optional[str]
    with_dependencies: bool = True


def _delta(spark_line: str, scala: str, version: str, fetched: bool) -> JarRelease:
    package = f"io.delta:delta-spark_{scala}:{version}"
    jars = (package, f"io.delta:delta-storage:{version}")
    return JarRelease(spark_line, package, jars, f"delta-spark{spark_line}" if fetched else None)


def _iceberg(spark_line: str, scala: str, version: str) -> JarRelease:
    package = f"org.apache.iceberg:iceberg-spark-runtime-{spark_line}_{scala}:{version}"
    return JarRelease(spark_line, package, (package,), f"iceberg-spark{spark_line}")


# The line constraints.txt installs, and the one an unknown line's hint falls back to.
HOME_LINE = "4.1"
# The older line kept working for platforms that still run it (constraints-spark35.txt).
COMPATIBILITY_LINE = "3.5"

# The home line first: an unknown Spark line is offered its coordinates.
DELTA_RELEASES: tuple[JarRelease, ...] = (
    _delta("4.1", "2.13", "4.3.1", fetched=True),
    _delta("3.5", "2.12", "3.3.3", fetched=True),
)

ICEBERG_RELEASES: tuple[JarRelease, ...] = (
    _iceberg("4.1", "2.13", "1.12.0"),
    _iceberg("3.5", "2.12", "1.12.0"),
)

# Spark 3.5's Connect server (Spark 4 bundles it): the jar a server is started with, on
# --jars beside PySpark's own jars, so its Maven dependencies (Spark's modules) are not
# fetched. Maven Central as served here lacks one of them (spark-protobuf_2.12 3.5.x,
# 2026-11-26), which made a fetch with dependencies fail.
CONNECT_RELEASES: tuple[JarRelease, ...] = (
    JarRelease(
        "3.5",
        "org.apache.spark:spark-connect_2.12:3.5.7",
        ("org.apache.spark:spark-connect_2.12:3.5.7",),
        "spark-connect3.5",
        with_dependencies=False,
    ),
)

FETCHED_RELEASES: tuple[JarRelease, ...] = tuple(
    r for r in (*DELTA_RELEASES, *ICEBERG_RELEASES, *CONNECT_RELEASES) if r.jars_dir
)

_LINE = re.compile(r"^\s*(\d+)\.(\d+)")


def spark_line(spark_version: str) -> str:
    """``3.5`` for ``3.5.7``; empty when the version cannot be read."""
    match = _LINE.match(spark_version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else ""


def delta_release(spark_version: str) -> Optional[JarRelease]:
    """The Delta release for this Spark version, or None when Delta has none for it
    (Spark 4.2 and 4.3 when this was written)."""
    return _release_for(DELTA_RELEASES, spark_version)


def connect_release(spark_version: str) -> Optional[JarRelease]:
    """Spark Connect's server artifact for this Spark version, or None (Spark 4 bundles
    its server)."""
    return _release_for(CONNECT_RELEASES, spark_version)


def iceberg_release(spark_version: str) -> Optional[JarRelease]:
    """The Iceberg runtime for this Spark version, or None."""
    return _release_for(ICEBERG_RELEASES, spark_version)


def _release_for(releases: tuple[JarRelease, ...], spark_version: str) -> Optional[JarRelease]:
    line = spark_line(spark_version)
    return next((r for r in releases if r.spark_line == line), None)


def package_for(spark_version: str) -> str:
    """Delta's Maven coordinates for this Spark version (the home line's release when
    Delta has none for it: loading then fails with Delta's own message)."""
    release = delta_release(spark_version)
    return (release or DELTA_RELEASES[0]).package


def iceberg_package_for(spark_version: str) -> str:
    """Iceberg's runtime coordinates for this Spark version (the home line's runtime
    when Iceberg has none for it: loading then fails with Spark's own message)."""
    release = iceberg_release(spark_version)
    return (release or ICEBERG_RELEASES[0]).package


def installed_pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def packages_hint() -> str:
    """Every known Delta pairing, for error messages that cannot know the server's Spark."""
    return "; ".join(f"Spark {r.spark_line}: {r.package}" for r in DELTA_RELEASES)


def iceberg_packages_hint() -> str:
    """Every known Iceberg runtime pairing, for error messages."""
    return "; ".join(f"Spark {r.spark_line}: {r.package}" for r in ICEBERG_RELEASES)
