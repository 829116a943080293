"""A class-data-sharing archive for the process tests' short-lived Spark JVMs.

Each dbt process of the crash tests starts its own embedded session: a JVM that loads
Spark's, Hive's and Parquet's classes from scratch, about 9 s of CPU before its first
statement. Java's dynamic class-data sharing (JDK 13+) maps classes a previous JVM
loaded from an archive instead: measured on 2 cores, a session's start up to its first
statements took 5.3 s of CPU with the archive against 9.2 s without.

The archive is made once per pytest process by one throwaway session (the same JVM
options, a table written and read), in the process's temporary directory. A JVM whose
class path does not match the archive's ignores it and loads classes as before, so the
archive changes nothing a test sees but its minutes. Where the archive cannot be made,
the JVMs run without it.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The session the archive is made from: what a dbt run's JVM loads first (Hive's
# metastore, a parquet write and read, a described table).
_ARCHIVE_RUN = """
import sys
from pyspark.sql import SparkSession
state, options = sys.argv[1], sys.argv[2]
spark = (
    SparkSession.builder.master("local[2]").enableHiveSupport()
    .config("spark.ui.enabled", "false")
    .config("spark.sql.warehouse.dir", state + "/warehouse")
    .config("spark.hadoop.javax.jdo.option.ConnectionURL",
            "jdbc:derby:;databaseName=" + state + "/metastore_db;create=true")
    .config("spark.driver.extraJavaOptions", options)
    .getOrCreate()
)
spark.sql("create table archived using parquet as select id, cast(id as string) s from range(10)")
spark.sql("insert into archived select id, s from archived")
spark.sql("describe table extended archived").collect()
spark.sql("select count(*), max(s) from archived group by id % 2").collect()
# The JVM writes the archive as it exits: it exits when its stdin closes; wait for it.
jvm = spark.sparkContext._gateway.proc
spark.stop()
jvm.stdin.close()
sys.exit(jvm.wait(timeout=240))
"""


@functools.cache
def archive_options(jvm_options: str) -> str:
    """``jvm_options`` plus the shared archive made with them, or ``jvm_options`` alone
    where making the archive failed (the reason is printed)."""
    state = Path(tempfile.mkdtemp(prefix="jammi-class-archive-"))
    atexit.register(shutil.rmtree, state, True)  # the archive is about 160 MB
    archive = state / "spark-classes.jsa"
    dump = f"{jvm_options} -XX:ArchiveClassesAtExit={archive}"
    try:
        made = subprocess.run(
            [sys.executable, "-c", _ARCHIVE_RUN, str(state), dump],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, PYSPARK_SUBMIT_ARGS="pyspark-shell"),
        )
    except subprocess.TimeoutExpired:
        print("class archive: the archiving session timed out; JVMs start without one")
        return jvm_options
    if made.returncode != 0 or not archive.is_file():
        print(f"class archive: not made ({made.stderr.strip()[-300:]}); JVMs start without one")
        return jvm_options
    for made_by_the_run in ("metastore_db", "warehouse"):
        shutil.rmtree(state / made_by_the_run, ignore_errors=True)
    return f"{jvm_options} -XX:SharedArchiveFile={archive}"
