"""A Spark Thrift Server on loopback, built from the jars the installed PySpark ships.

No downloads: PySpark's wheel already carries spark-hive-thriftserver, Hive 2.3 and
Derby. The server gets its own Derby metastore and warehouse under a temporary
directory, binds 127.0.0.1 on a free port, and runs in its own process group so
stopping it leaves no orphaned JVM. The command line is scripts/thrift_server.py.

From Python (a pytest fixture, say):
  with running_thrift_server() as server:
      ...  server.host, server.port
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/, for spark_cluster
from hive_lock_tables import ensure_lock_tables  # noqa: E402
from iceberg_probe import iceberg_confs  # noqa: E402
from spark_cluster import StandaloneCluster, free_port, kill_group  # noqa: E402

HOST = "127.0.0.1"
THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STATE_DIR = Path(tempfile.gettempdir()) / "jammi-thrift-server"
STARTUP_TIMEOUT_S = float(os.environ.get("JAMMI_THRIFT_STARTUP_TIMEOUT", "300"))


def pyspark_home() -> Path:
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    if not list((home / "jars").glob("spark-hive-thriftserver_*.jar")):
        raise SystemExit(
            f"{home / 'jars'} has no spark-hive-thriftserver jar; "
            "this PySpark build cannot run a Thrift server"
        )
    return home


DELTA_CONFS = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # a snapshot's log replay in 2 tasks instead of 50: a local server's tables are small
    "spark.databricks.delta.snapshotPartitions": "2",
}


def table_format_confs(table_format: str) -> dict[str, str]:
    """A server's settings for its ``table_format`` (its jars loaded, `file_format: auto`
    builds it), which make the format spark_catalog's: Delta's, or Iceberg's for the
    installed Spark line (on Spark 4 Hive's lock handler pools with DBCP, iceberg_probe.py)."""
    if table_format == "delta":
        return dict(DELTA_CONFS)
    from dbt.adapters.jammi.engine.jar_releases import installed_pyspark_version

    return iceberg_confs(installed_pyspark_version())


def server_command(
    spark_home: Path,
    state: Path,
    port: int,
    format_jars: Optional[str] = None,
    cluster_confs: Optional[dict[str, str]] = None,
    table_format: Optional[str] = None,
    catalog_confs: Optional[dict[str, str]] = None,
) -> list[str]:
    """spark-submit of HiveThriftServer2, state confined to `state`: in local mode, or
    with ``cluster_confs`` (StandaloneCluster.application_confs) as the driver of an
    application on a standalone cluster; with ``table_format`` (delta or iceberg) and its
    ``format_jars`` (comma-separated), that format is spark_catalog's on the server's
    session (and its jars are shipped to the executors); ``catalog_confs``: more catalog
    settings after those (an Iceberg catalog service as the default catalog)."""
    metastore = state / "metastore_db"
    confs = {
        "spark.master": os.environ.get("JAMMI_THRIFT_MASTER", "local[2]"),
        **(cluster_confs or {}),
        "spark.app.name": "jammi-thrift-server",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        # dates before 1582 and timestamps before 1900 are written as they are
        # (docs/connecting.md, "What dbt-jammi sets")
        "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
        "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
        "spark.sql.warehouse.dir": str(state / "warehouse"),
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={metastore};create=true"
        ),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={state}",
        "spark.driver.host": HOST,
        "spark.hadoop.hive.server2.thrift.bind.host": HOST,
        "spark.hadoop.hive.server2.thrift.port": str(port),
    }
    if table_format and format_jars:
        confs.update(table_format_confs(table_format))
        # On the driver's own class path too: the server runs statements on its handler
        # threads, whose class loader does not see `--jars` (NoClassDefFoundError on
        # the format's classes otherwise).
        confs["spark.driver.extraClassPath"] = format_jars.replace(",", os.pathsep)
    confs.update(catalog_confs or {})
    command = [
        str(spark_home / "bin" / "spark-submit"),
        "--driver-memory",
        os.environ.get("JAMMI_THRIFT_DRIVER_MEMORY", "1g"),
        "--class",
        THRIFT_SERVER_CLASS,
    ]
    if table_format and format_jars:
        command += ["--jars", format_jars]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    command += [
        "spark-internal",
        "--hiveconf",
        f"hive.server2.thrift.bind.host={HOST}",
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
    ]
    return command


def can_query(host: str, port: int) -> bool:
    """True when a real PyHive connection answers `SELECT 1`."""
    from pyhive import hive

    try:
        conn = hive.connect(host=host, port=port, username="jammi")
    except Exception:
        return False
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT 1")
        return cursor.fetchall() == [(1,)]
    except Exception:
        return False
    finally:
        with contextlib.suppress(Exception):
            conn.close()


def _port_open(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex((host, port)) == 0


@dataclass
class ThriftServer:
    state_dir: Path
    host: str = HOST
    port: int = 0
    pid: int = 0
    table_format: Optional[str] = None  # delta or iceberg, with format_jars; None: parquet
    format_jars: Optional[str] = None
    cluster_confs: Optional[dict[str, str]] = None
    catalog_confs: Optional[dict[str, str]] = None  # e.g. a REST catalog as the default

    @property
    def log_path(self) -> Path:
        return self.state_dir / "server.log"

    @property
    def info_path(self) -> Path:
        return self.state_dir / "server.json"

    def start(self, timeout: float = STARTUP_TIMEOUT_S) -> ThriftServer:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if self.info_path.exists():
            raise SystemExit(
                f"{self.info_path} exists: a server may already run from this state "
                f"directory; stop it first (`thrift_server.py stop --state-dir {self.state_dir}`)"
            )
        if self.table_format == "iceberg" and self.format_jars:
            # Iceberg commits under Hive's table lock: its tables, before the server
            # opens the Derby metastore (one JVM at a time).
            settings = {"spark.jars": self.format_jars, **table_format_confs("iceberg")}
            ensure_lock_tables(self.state_dir, settings)
        spark_home = pyspark_home()
        self.port = self.port or free_port()  # a restart keeps its port
        env = dict(os.environ, SPARK_HOME=str(spark_home))
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        env.setdefault("SPARK_LOCAL_IP", HOST)
        with open(self.log_path, "ab") as log:
            process = subprocess.Popen(
                self.command(spark_home),
                cwd=self.state_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: stop() kills all of it
            )
        self.pid = process.pid
        self.info_path.write_text(
            json.dumps({"host": self.host, "port": self.port, "pid": self.pid})
        )
        self._wait_ready(process, timeout)
        return self

    label = "Thrift server"

    def command(self, spark_home: Path) -> list[str]:
        """The server's command line (a subclass starts another server the same way)."""
        return server_command(
            spark_home,
            self.state_dir,
            self.port,
            self.format_jars,
            self.cluster_confs,
            self.table_format,
            self.catalog_confs,
        )

    def answers(self) -> bool:
        """True once the server answers a query."""
        return _port_open(self.host, self.port) and can_query(self.host, self.port)

    def _wait_ready(self, process: subprocess.Popen, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self._cleanup_info()
                raise SystemExit(
                    f"{self.label} exited with code {process.returncode} before "
                    f"accepting connections; last log lines:\n{self.log_tail()}"
                )
            if self.answers():
                return
            time.sleep(2)
        self.stop()
        raise SystemExit(
            f"{self.label} did not answer SELECT 1 within {timeout:.0f}s; "
            f"last log lines:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(text[-lines:])

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM the server's process group, then SIGKILL whatever is left."""
        if not self.pid:
            return
        kill_group(self.pid, signal.SIGTERM, timeout)
        self._cleanup_info()
        self.pid = 0

    def kill(self) -> None:
        """SIGKILL the server's process group at once (a crash, not a shutdown); the
        state directory stays, so `start()` brings the same server back on its port."""
        if self.pid:
            kill_group(self.pid, signal.SIGKILL, timeout=0)
        self._cleanup_info()
        self.pid = 0

    def _cleanup_info(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.info_path.unlink()

    @classmethod
    def from_state_dir(cls, state_dir: Path) -> Optional[ThriftServer]:
        try:
            info = json.loads((state_dir / "server.json").read_text())
        except FileNotFoundError:
            return None
        return cls(state_dir=state_dir, host=info["host"], port=info["port"], pid=info["pid"])


@contextlib.contextmanager
def running_thrift_server(
    state_dir: Optional[Path] = None,
    keep_state: bool = False,
    table_format: Optional[str] = None,
    format_jars: Optional[str] = None,
    cluster: Optional[StandaloneCluster] = None,
    catalog_confs: Optional[dict[str, str]] = None,
) -> Iterator[ThriftServer]:
    """A started server for the duration of the block (on ``cluster`` when given, else
    in local mode); state removed afterwards. ``catalog_confs``: ThriftServer's."""
    own_dir = state_dir is None
    directory = Path(tempfile.mkdtemp(prefix="jammi-thrift-")) if own_dir else Path(state_dir)
    server = ThriftServer(
        state_dir=directory,
        table_format=table_format,
        format_jars=format_jars,
        cluster_confs=cluster.application_confs() if cluster else None,
        catalog_confs=catalog_confs,
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()
        if own_dir and not keep_state:
            shutil.rmtree(directory, ignore_errors=True)


def server_format_jars(table_format: str) -> Optional[str]:
    """The jar list (comma-separated) a server of ``table_format`` loads:
    JAMMI_<FORMAT>_JARS (files or a directory), else the .jars/ folder `make jars`
    filled for the installed Spark line."""
    from delta_lane import local_jars  # scripts/ is this script's directory
    from fetch_jars import jars_dir

    from dbt.adapters.jammi.engine.jar_releases import iceberg_release, installed_pyspark_version

    if table_format == "delta":
        return local_jars(os.environ.get("JAMMI_DELTA_JARS"))
    override = os.environ.get("JAMMI_ICEBERG_JARS")
    if override:
        return local_jars(override)
    release = iceberg_release(installed_pyspark_version())
    folder = jars_dir(release) if release and release.jars_dir else None
    jars = sorted(folder.glob("*.jar")) if folder and folder.is_dir() else []
    return ",".join(str(j) for j in jars) or None


def server_env(server: ThriftServer) -> dict[str, str]:
    return dict(os.environ, JAMMI_THRIFT_HOST=server.host, JAMMI_THRIFT_PORT=str(server.port))
