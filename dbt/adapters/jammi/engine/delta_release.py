"""Which Delta Lake release goes with which Spark (docs.delta.io/releases).

Delta's Spark jars are built for one Spark line and one Scala version, so a session
must load the release that matches its PySpark. The tests, the lanes and the Thrift
server script pick the jars here; users copy the coordinates from README's version
table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class DeltaRelease:
    """A Delta Lake release for one Spark line: Maven coordinates for machines that
    reach Maven Central, and the folder of ``../shared/jars`` holding the same jars
    for machines that do not (None: no local copy)."""

    spark_line: str
    package: str
    shared_jars_dir: Optional[str]


RELEASES: tuple[DeltaRelease, ...] = (
    DeltaRelease("3.5", "io.delta:delta-spark_2.12:3.2.1", "delta"),
    DeltaRelease("4.0", "io.delta:delta-spark_2.13:4.0.1", "delta-spark4"),
    # Delta 4.1 is built for Spark 4.1 and names the Spark line in its artifact.
    DeltaRelease("4.1", "io.delta:delta-spark_4.1_2.13:4.1.0", None),
)

_LINE = re.compile(r"^\s*(\d+)\.(\d+)")


def spark_line(spark_version: str) -> str:
    """``3.5`` for ``3.5.7``; empty when the version cannot be read."""
    match = _LINE.match(spark_version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else ""


def delta_release(spark_version: str) -> Optional[DeltaRelease]:
    """The Delta release for this Spark version, or None when Delta has none for it
    (e.g. Spark 4.2 and 4.3 when this was written)."""
    line = spark_line(spark_version)
    return next((r for r in RELEASES if r.spark_line == line), None)


def package_for(spark_version: str) -> str:
    """Maven coordinates for this Spark version (Spark 3.5's release when Delta has none
    for it: loading then fails with Delta's own message)."""
    release = delta_release(spark_version)
    return (release or RELEASES[0]).package


def installed_pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def packages_hint() -> str:
    """Every known pairing, for error messages that cannot know the server's Spark."""
    return "; ".join(f"Spark {r.spark_line}: {r.package}" for r in RELEASES)
