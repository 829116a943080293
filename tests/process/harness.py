"""Real `dbt` processes for the process tests: a throwaway dbt project on disk, dbt
invocations as subprocesses (each in its own process group, with its own target and log
paths so parallel runs do not clobber each other), their per-model results read back
from run_results.json, and a SIGKILL that takes the whole process group (dbt and its
Spark JVM) down at once."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

import pytest
import yaml

from dbt.adapters.jammi.mutable_table.version_locations import parse_version
from tests.conftest import TEST_JVM_OPTIONS, lane_connect_url
from tests.process.class_archive import archive_options

DBT = str(Path(sys.executable).parent / "dbt")
PROJECT_NAME = "jammi_process"
STATE_MARKER = "JAMMI_STATE "
RUN_TIMEOUT_S = 600.0

# A JVM stack frame ("at org.apache...(File.java:12)"), a chained cause or a Python
# traceback: what a user must not be handed as the explanation of a failed run.
_RAW_TRACE = re.compile(
    r"^\s*at [\w$.<>]+\(.*\)\s*$|^\s*Caused by: |Traceback \(most recent call last\)",
    re.MULTILINE,
)


# One line per scenario; tests/process/conftest.py prints them at the end of the session.
# (Kept here, not in conftest.py: pytest imports that under another module name.)
SUMMARY: list[str] = []


def report(line: str) -> None:
    """Record a scenario's summary line (also printed right away for `-s` runs)."""
    SUMMARY.append(line)
    print(f"\n{line}", flush=True)


def points_from_env(name: str, default: tuple) -> tuple:
    """A process test's kill or fault points: the comma-separated numbers in ``name``
    (empty: none), else ``default``. The gate runs fewer points than the full lanes
    (scripts/lane_map.py, GATE_SLICE_ENV); the numbers mean the same in both."""
    value = os.environ.get(name)
    if value is None:
        return default
    return tuple(float(part) for part in value.split(",") if part.strip())


def is_clear_failure(message: Optional[str]) -> bool:
    """A failure message a user can act on: present, and not a raw stack trace."""
    return bool(message and message.strip()) and not _RAW_TRACE.search(message or "")


def first_line(message: Optional[str], width: int = 300) -> str:
    """The message without dbt's "Runtime Error in model ..." header, on one line."""
    lines = [ln.strip() for ln in (message or "").strip().splitlines() if ln.strip()]
    if len(lines) > 1 and " Error in model " in lines[0]:
        lines = lines[1:]
    return " | ".join(lines)[:width] if lines else "(no message)"


def classify(observed, old, new) -> str:
    """What a reader sees after a fault: the state before the run, after it, or a mix."""
    if observed == old:
        return "old"
    if observed == new:
        return "new"
    return "mixed"


def check(result: DbtResult, label: str) -> None:
    """Assert that a run every model of which had to succeed did."""
    failed = {n: first_line(m.message) for n, m in result.models.items() if not m.ok}
    assert result.returncode == 0 and not failed, f"{label}: {failed or result.output[-2000:]}"


def changelog_problem(state: dict, lag_allowed: bool, base_rows: int, growth: int) -> Optional[str]:
    """Why the changelog of a table whose batch ``b`` holds ``base_rows + b * growth``
    keys (all new in version 1, ``growth`` more in each later version) does not hold
    every committed version exactly once, complete and in order; None when it does.
    ``state['changes']``: per offset [offset, events, min batch, max batch, distinct
    _row_idx, inserts]. ``lag_allowed``: right after a fault the last committed version
    may not be published yet."""
    version, changes = state.get("version"), state.get("changes") or []
    offsets = [c[0] for c in changes]
    if version is None or (
        offsets != list(range(1, version + 1))
        and not (lag_allowed and offsets == list(range(1, version)))
    ):
        return f"offsets {offsets} for table version {version}"
    batches = [c[2] for c in changes]
    if batches != sorted(set(batches)):
        return f"batches out of order or repeated: {batches}"
    for offset, count, low, high, row_indexes, inserts in changes:
        rows = base_rows + low * growth
        expected_inserts = rows if offset == 1 else growth
        if (count, high, row_indexes, inserts) != (rows, low, rows, expected_inserts):
            return f"offset {offset} is not one complete version: {changes}"
    return None


@dataclass
class DbtProject:
    """A dbt project directory with one `jammi` output in its own profiles.yml."""

    root: Path
    target: dict
    models: dict[str, str] = field(default_factory=dict)
    macros: dict[str, str] = field(default_factory=dict)
    project_config: dict = field(default_factory=dict)

    def write(self) -> DbtProject:
        for folder, files in (("models", self.models), ("macros", self.macros)):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (self.root / folder / name).write_text(text)
        project = {
            "name": PROJECT_NAME,
            "version": "1.0",
            "config-version": 2,
            "profile": PROJECT_NAME,
            **self.project_config,
        }
        (self.root / "dbt_project.yml").write_text(yaml.safe_dump(project))
        profiles = {PROJECT_NAME: {"target": "default", "outputs": {"default": self.target}}}
        (self.root / "profiles.yml").write_text(yaml.safe_dump(profiles))
        return self

    def command(self, args: list[str], tag: str) -> list[str]:
        scratch = self.root / "runs" / tag
        return [
            DBT,
            *args,
            "--project-dir",
            str(self.root),
            "--profiles-dir",
            str(self.root),
            "--target-path",
            str(scratch / "target"),
            "--log-path",
            str(scratch / "logs"),
        ]

    def start(self, args: list[str], tag: str) -> DbtProcess:
        """Start `dbt <args>` in its own process group; output goes to runs/<tag>/out."""
        scratch = self.root / "runs" / tag
        scratch.mkdir(parents=True, exist_ok=True)
        out = scratch / "out"
        with open(out, "wb") as sink:
            popen = subprocess.Popen(
                self.command(args, tag),
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false"),
            )
        return DbtProcess(popen, scratch, time.monotonic())

    def run(self, args: list[str], tag: str) -> DbtResult:
        return self.start(args, tag).wait()


@dataclass
class ModelResult:
    name: str
    status: str
    message: Optional[str]

    @property
    def ok(self) -> bool:
        return self.status == "success"


@dataclass
class DbtResult:
    returncode: int
    output: str
    models: dict[str, ModelResult]
    seconds: float
    scratch: Optional[Path] = None  # runs/<tag>: out, target/, logs/

    def log(self) -> str:
        """The run's dbt.log (every statement it sent, with its status and time)."""
        if self.scratch is None:
            return ""
        return (self.scratch / "logs" / "dbt.log").read_text(errors="replace")

    def model(self, name: str) -> ModelResult:
        """The model's result; a run that died before reporting counts as an error."""
        found = self.models.get(name)
        if found is not None:
            return found
        return ModelResult(name, "not reported", _tail(self.output))

    def states(self) -> list[dict]:
        """The JSON documents the project's hooks printed with STATE_MARKER, in order; one
        with a rewrite table's ``location`` also gets that version's number."""
        documents = [
            json.loads(line.split(STATE_MARKER, 1)[1])
            for line in self.output.splitlines()
            if STATE_MARKER in line
        ]
        for document in documents:
            if "location" in document and "version" not in document:
                location = document["location"]
                document["version"] = parse_version(location) if location else None
        return documents


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


@dataclass
class DbtProcess:
    popen: subprocess.Popen
    scratch: Path
    started: float

    def wait(self, timeout: float = RUN_TIMEOUT_S) -> DbtResult:
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        return self._result()

    def kill(self) -> DbtResult:
        """SIGKILL the whole process group (dbt and its JVM) and wait until it is gone."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=60)
        deadline = time.monotonic() + 60
        while _group_alive(self.popen.pid):
            if time.monotonic() > deadline:
                raise AssertionError(f"process group {self.popen.pid} survived SIGKILL")
            time.sleep(0.2)
        return self._result()

    def _result(self) -> DbtResult:
        seconds = time.monotonic() - self.started
        output = (self.scratch / "out").read_text(errors="replace")
        models: dict[str, ModelResult] = {}
        results_path = self.scratch / "target" / "run_results.json"
        if results_path.exists():
            for entry in json.loads(results_path.read_text())["results"]:
                name = entry["unique_id"].rsplit(".", 1)[-1]
                models[name] = ModelResult(name, entry["status"], entry.get("message"))
        return DbtResult(self.popen.returncode, output, models, seconds, self.scratch)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# The marks of a module whose tests race dbt processes on a server: a Thrift server (the
# Thrift lanes) or a Spark Connect server (the connect lanes; thrift_project picks it).
SERVER_RACES = [
    pytest.mark.thrift,
    pytest.mark.skipif(
        os.environ.get("JAMMI_TEST_METHOD", "session") not in ("thrift", "connect"),
        reason="needs JAMMI_TEST_METHOD=thrift or connect and its server",
    ),
]

# The marks of a module whose tests need a Thrift server (the Thrift lanes run them).
THRIFT_ONLY = [
    pytest.mark.thrift,
    pytest.mark.skipif(
        os.environ.get("JAMMI_TEST_METHOD", "session") != "thrift",
        reason="needs JAMMI_TEST_METHOD=thrift and a Thrift server",
    ),
]


def thrift_target(host: str, port: int, schema: str, user: str, **extra: object) -> dict:
    """A profile target for dbt processes against the Thrift server at host:port."""
    return {
        "type": "jammi",
        "method": "thrift",
        "host": host,
        "port": port,
        "user": user,
        "schema": schema,
        "threads": 1,
        "connect_retries": 3,
        "connect_timeout": 10,
        **extra,
    }


def session_target(schema: str, session_dir: Path) -> dict:
    """A profile target for dbt processes on their own embedded session, whose metastore
    and warehouse are in ``session_dir`` (every process of a test shares them)."""
    return {
        "type": "jammi",
        "method": "session",
        "host": "localhost",
        "schema": schema,
        "threads": 1,
        "session_dir": str(session_dir),
        "server_side_parameters": {
            "spark.master": "local[2]",
            "spark.sql.shuffle.partitions": "4",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.extraJavaOptions": archive_options(TEST_JVM_OPTIONS),
        },
    }


def run_together(
    project: DbtProject, invocations: dict[str, list[str]], label: str
) -> dict[str, DbtResult]:
    """Start every invocation back to back (they race from the first statement on) and
    wait for all of them; each keeps its output under runs/<label>-<key>."""
    started = {key: project.start(args, f"{label}-{key}") for key, args in invocations.items()}
    return {key: process.wait() for key, process in started.items()}


class ThriftSql:
    """Reads through PyHive from the test process, each on a fresh connection: a Thrift
    server session caches table metadata and file listings, so a long-lived reader
    would not see what other sessions committed since its last read."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    def _execute(self, sql: str, fetch: bool) -> list[tuple]:
        with self.session() as rows:
            return rows(sql) if fetch else rows(sql, fetch=False)

    @contextlib.contextmanager
    def session(self):
        """One fresh connection for reads that belong together (one state seen after a
        run): yields ``rows(sql)``."""
        rows, close = self._open()
        try:
            yield rows
        finally:
            with contextlib.suppress(Exception):
                close()

    def _open(self) -> tuple[Callable[..., list[tuple]], Callable[[], None]]:
        """A fresh connection's ``rows(sql, fetch=True)`` and its ``close``."""
        from pyhive import hive

        conn = hive.connect(host=self.host, port=self.port, username="jammi_process_test")
        cursor = conn.cursor()

        def rows(sql: str, fetch: bool = True) -> list[tuple]:
            cursor.execute(sql)
            return [tuple(r) for r in cursor.fetchall()] if fetch else []

        return rows, conn.close

    def rows(self, sql: str) -> list[tuple]:
        return self._execute(sql, fetch=True)

    def execute(self, sql: str) -> None:
        """A statement without a result set (PyHive cannot fetch those from Spark 3.4+)."""
        self._execute(sql, fetch=False)

    def table_exists(self, schema: str, table: str) -> bool:
        return any(r[1] == table for r in self.rows(f"show tables in {schema} like '{table}'"))


class ConnectSql(ThriftSql):
    """ThriftSql's reads on a Spark Connect server (the connect lane): each on a fresh
    remote session, for the same reason as a fresh Thrift connection."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _open(self) -> tuple[Callable[..., list[tuple]], Callable[[], None]]:
        from pyspark.sql.connect.session import SparkSession

        spark = SparkSession.builder.remote(self.url).create()

        def rows(sql: str, fetch: bool = True) -> list[tuple]:
            frame = spark.sql(sql)
            return [tuple(r) for r in frame.collect()] if fetch else []

        return rows, spark.stop


@contextlib.contextmanager
def thrift_project(
    root: Path, schema_prefix: str, models: dict[str, str], user: str = "jammi_process_test"
) -> Iterator[tuple[DbtProject, ThriftSql, str]]:
    """A dbt project in ``root`` whose target is the lane's Thrift server
    (JAMMI_THRIFT_HOST/PORT) and a schema of its own, ``<schema_prefix>_<8 hex>``;
    yields (project, a reader on the server, the schema), whose schema is dropped after."""
    host = os.environ.get("JAMMI_THRIFT_HOST", "127.0.0.1")
    port = int(os.environ.get("JAMMI_THRIFT_PORT", "10000"))
    schema = f"{schema_prefix}_{uuid.uuid4().hex[:8]}"
    target = thrift_target(host, port, schema, user)
    sql = ThriftSql(host, port)
    if os.environ.get("JAMMI_TEST_METHOD") == "connect":  # the connect lane's server
        target = {k: v for k, v in target.items() if k != "port"}  # the URL's port
        target.update(method="connect", host=lane_connect_url())
        sql = ConnectSql(lane_connect_url())
    project = DbtProject(root=root, target=target, models=models).write()
    yield project, sql, schema
    drop_schema(sql, schema)


def drop_schema(sql: ThriftSql, schema: str) -> None:
    """Drop a test's schema. An Iceberg REST catalog drops only empty namespaces, so
    there its views and tables go first, one by one."""
    if not os.environ.get("JAMMI_ICEBERG_REST_URI"):
        sql.execute(f"drop schema if exists {schema} cascade")
        return
    for view in sql.rows(f"show views in {schema}"):
        if not view[2]:  # a temporary view belongs to no schema
            sql.execute(f"drop view if exists {schema}.{view[1]}")
    for table in sql.rows(f"show tables in {schema}"):
        sql.execute(f"drop table if exists {schema}.{table[1]}")
    sql.execute(f"drop schema if exists {schema}")
