"""Hive's lock tables in an embedded Derby metastore, for Iceberg's locked commits.

Iceberg's Hive catalog commits by swapping the table's `metadata_location` in the
metastore. With Hive's table lock (`iceberg.engine.hive.lock-enabled`, Iceberg's
default) the swap happens under an exclusive lock after a check that nobody committed
since the commit's base: a racing commit is refused and Iceberg retries it on the new
base. Without the lock, Spark 3.5's Hive 2.3 metastore does not check the expected
location, so two racing commits can both succeed and one is lost (measured here: 2 of 6
racing commits lost over Thrift).

A metastore set up by Hive's `schematool` has the lock tables. An embedded Derby
metastore created by DataNucleus (`datanucleus.schema.autoCreateAll`, what the lanes and
an embedded session use) does not: Hive creates them only in its test mode
(`hive.in.test`), whose strict checks then refuse Iceberg's lock requests ("Bug:
operationType=UNSET"). So `ensure_lock_tables` runs a one-off Spark JVM in test mode on
the metastore: its first lock request creates the tables and is refused. Sessions that
open the metastore afterwards, without test mode, lock normally.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Where a state directory records that its metastore has the lock tables.
STAMP = "hive_lock_tables.done"
REFUSED_IN_TEST_MODE = "operationType=UNSET"

_CHILD = """
import json, os, sys
from pyspark.sql import SparkSession
state = os.environ['JAMMI_LOCK_STATE']
b = (SparkSession.builder.master('local[1]')
     .config('spark.ui.enabled', 'false')
     .config('spark.sql.warehouse.dir', os.environ['JAMMI_LOCK_WAREHOUSE'])
     .config('spark.driver.extraJavaOptions', '-Dderby.system.home=' + state)
     .config('spark.hadoop.javax.jdo.option.ConnectionURL',
             'jdbc:derby:;databaseName=' + state + '/metastore_db;create=true'))
for key, value in json.loads(os.environ['JAMMI_LOCK_SETTINGS']).items():
    b = b.config(key, value)
b = b.config('spark.hadoop.hive.in.test', 'true')
b = b.config('spark.hadoop.iceberg.engine.hive.lock-enabled', 'true')
s = b.enableHiveSupport().getOrCreate()
try:
    s.sql('create table default.jammi_lock_tables_init (id int) using iceberg')
except Exception as error:
    print(str(error)[:2000])
    sys.exit(0)
s.sql('drop table default.jammi_lock_tables_init')
print('created without a lock request')
sys.exit(3)
"""


def ensure_lock_tables(state: Path, settings: dict[str, str]) -> None:
    """Create Hive's lock tables in the Derby metastore under ``state`` (its
    `metastore_db`, with `derby.system.home` = ``state``) unless done before. ``settings``
    are the Iceberg session's (ICEBERG_CONFS and its jars: spark.jars or
    spark.jars.packages). Raises SystemExit with the reason when they cannot be made; a
    metastore another JVM holds open cannot be prepared (Derby allows one JVM)."""
    state = Path(state)
    if (state / STAMP).exists():
        return
    state.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="jammi-lock-init-") as warehouse:
        env = dict(
            os.environ,
            JAMMI_LOCK_STATE=str(state),
            JAMMI_LOCK_WAREHOUSE=warehouse,
            JAMMI_LOCK_SETTINGS=json.dumps(settings),
        )
        run = subprocess.run(
            [sys.executable, "-c", _CHILD],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=warehouse,
        )
    if run.returncode != 0 or REFUSED_IN_TEST_MODE not in run.stdout:
        detail = (run.stdout + run.stderr).strip()[-800:]
        raise SystemExit(
            f"could not create Hive's lock tables in {state / 'metastore_db'} (exit "
            f"{run.returncode}); Iceberg's locked commits need them: {detail}"
        )
    (state / STAMP).write_text("Hive's lock tables exist in metastore_db\n")
