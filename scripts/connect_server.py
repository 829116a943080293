"""A Spark Connect server on loopback, and the `make connect-lane` lane.

Started like the Thrift server (scripts/spark_thrift_server.py, whose ThriftServer this
subclasses): spark-submit from the installed PySpark's own jars, local mode, its own
Derby metastore and warehouse in a temporary state directory, a free port, its own
process group (stopped at exit). The server class is Spark's SparkConnectServer; on
Spark 3.5 its jar is the Maven artifact of jar_releases.CONNECT_RELEASES (`make jars`
copies it into .jars/), on Spark 4 it is among PySpark's jars.

Usage:
  python scripts/connect_server.py lane              # the `make connect-lane` lane
  python scripts/connect_server.py lane --check      # spark43-lane's step (CHECK_MARKS)
  python scripts/connect_server.py run -- CMD ...    # a server around one command
Both export JAMMI_CONNECT_URL (sc://127.0.0.1:<port>) to what they run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/
from iceberg_rest_catalog import (  # noqa: E402
    URI_VARIABLE,
    create_namespace,
    rest_catalog_confs,
    serving,
)
from lane_map import GATE_SLICES  # noqa: E402
from spark_thrift_server import (  # noqa: E402
    REPO_ROOT,
    ThriftServer,
    _port_open,
    server_command,
    server_format_jars,
)

from dbt.adapters.jammi.engine.jar_releases import connect_release, installed_pyspark_version

LOG_CONFIG = REPO_ROOT / "dbt" / "include" / "jammi" / "log4j2.properties"
CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
# The lane's slice: one mutable_table upsert+delete file, the changelog, a topic
# publish/consume, the Python models with their tenant probes (and the integration
# project). The tenant guard's statement plans are read as over Thrift (the Thrift lane
# runs its tests; the `guard_reader` mark, tests/conftest.py).
CONNECT_LANE_TESTS = (
    "tests/functional/connect",
    "tests/functional/mutable_table/test_mutable_upsert.py",
    "tests/functional/mutable_table/test_changelog.py",
    "tests/functional/topic/test_topic_consumers.py",
    "tests/functional/python_models",
)
# `lane --races` (make connect-lane, the home line): two dbt processes racing on one
# mutable_table or topic over Connect (tests/process/harness.py reads through a remote
# session there): one commits, the other re-plans or fails clearly, 0 lost updates.
CONNECT_RACE_TESTS = ("tests/process/test_thrift_races.py",)
# `lane --iceberg-rest`: those races and an identity column's on Iceberg, the server's
# default catalog Iceberg's REST catalog server.
CONNECT_REST_RACE_TESTS = (*CONNECT_RACE_TESTS, "tests/process/test_identity_races.py")
# `lane --check` (make spark43-connect-smoke, in spark43-lane, with `--marks smoke`): the
# newest Spark's Connect server runs what has a Spark-specific path; make connect-lane
# runs the whole lane on the home line.
CHECK_MARKS = "spark4_path or smoke"


def connect_jars() -> Optional[str]:
    """The jar to add for the server class: Spark 3.5's artifact (.jars/ from `make
    jars`, else the local Maven repository); None when PySpark bundles it (Spark 4)."""
    from fetch_jars import cached_jar, local_repository_jar

    release = connect_release(installed_pyspark_version())
    if release is None:
        return None
    coordinates = release.jars[0]
    for jar in (cached_jar(release, coordinates), local_repository_jar(coordinates)):
        if jar.is_file():
            return str(jar)
    raise SystemExit(
        f"no Spark Connect server jar: {coordinates} is neither in .jars/ nor in "
        "~/.m2/repository; fetch it with `make jars`"
    )


class ConnectServer(ThriftServer):
    label = "Spark Connect server"

    @property
    def url(self) -> str:
        return f"sc://{self.host}:{self.port}"

    def command(self, spark_home: Path) -> list[str]:
        """The Thrift server's command line (its state, confs and local master) with
        SparkConnectServer as the class and the Connect port."""
        command = server_command(
            spark_home,
            self.state_dir,
            self.port,
            self.format_jars,
            table_format=self.table_format,
            catalog_confs=self.catalog_confs,
        )
        command = command[: command.index("spark-internal")]
        # errors only in its log (the adapter's own log4j2 settings): a server logging
        # every statement at INFO spends the lane's CPU on it
        options = command.index(
            f"spark.driver.extraJavaOptions=-Dderby.system.home={self.state_dir}"
        )
        command[options] += f" -Dlog4j2.configurationFile=file:{LOG_CONFIG}"
        command[command.index("--class") + 1] = CONNECT_SERVER_CLASS
        jar = connect_jars()
        if "--jars" in command:  # one --jars (spark-submit keeps only the last one)
            position = command.index("--jars") + 1
            command[position] = ",".join(j for j in (command[position], jar) if j)
            extra = []
        else:
            extra = ["--jars", jar] if jar else []
        return [
            *command,
            *extra,
            "--conf",
            "spark.app.name=jammi-connect-server",
            "--conf",
            f"spark.connect.grpc.binding.port={self.port}",
            "--conf",
            f"spark.connect.grpc.binding.address={self.host}",
        ]

    def answers(self) -> bool:
        if not _port_open(self.host, self.port):
            return False
        try:
            from pyspark.sql.connect.session import SparkSession

            spark = SparkSession.builder.remote(self.url).create()
            try:
                return spark.sql("select 1 as one").collect()[0][0] == 1
            finally:
                spark.stop()
        except Exception:
            return False


def run_lane(
    server: ConnectServer,
    env: dict[str, str],
    races: bool = False,
    marks: Optional[str] = None,
    gate: bool = False,
) -> int:
    """The integration project (--target connect), then the feature tests' slice (and,
    with ``races``, the process races). With ``marks`` (Spark 4's check: CHECK_MARKS),
    only the slice's tests so marked, and no build: what has a Spark-4-specific path
    (the Connect client, DataFrames, plan readers, error conversion). With ``gate``, the
    gate's Connect slice (scripts/lane_map.py) and no build."""
    python = Path(sys.executable)
    dbt = str(python.with_name("dbt"))
    project = REPO_ROOT / "integration_project"
    tests = [*CONNECT_LANE_TESTS, *(CONNECT_RACE_TESTS if races else ())]
    if gate:
        tests = list(GATE_SLICES["connect"])
    steps = [
        (
            [str(python), "-m", "pytest", *tests, *(["-m", marks] if marks else []),
             "-q", "-rs", "-p", "no:cacheprovider", "--durations=10"],
            REPO_ROOT,
        ),
    ]  # fmt: skip
    if not marks and not gate:
        build = [dbt, "build", "--profiles-dir", ".", "--project-dir", ".", "--target", "connect"]
        steps.insert(0, (build, project))
    code = 0
    for command, cwd in steps:
        started = time.monotonic()
        print(f"connect lane: {' '.join(command[:3])} ...", flush=True)
        result = subprocess.call(command, cwd=cwd, env=env)
        print(f"connect lane: exit {result} after {time.monotonic() - started:.0f}s", flush=True)
        code = code or result
    return code


def run_rest_races(env: dict[str, str]) -> int:
    """CONNECT_REST_RACE_TESTS over a Connect server whose default catalog is Iceberg's
    REST catalog server: two dbt processes racing on one table, topic or identity column."""
    command = [sys.executable, "-m", "pytest", *CONNECT_REST_RACE_TESTS, "-q", "-rs",
               "-p", "no:cacheprovider", "--durations=10"]  # fmt: skip
    started = time.monotonic()
    print(f"connect lane (Iceberg, REST catalog): {' '.join(command[:4])} ...", flush=True)
    result = subprocess.call(
        command, cwd=REPO_ROOT, env=dict(env, JAMMI_TEST_FILE_FORMAT="iceberg")
    )
    print(f"connect lane: exit {result} after {time.monotonic() - started:.0f}s", flush=True)
    return result


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lane = sub.add_parser("lane", help="start, dbt build + the lane's tests over connect, stop")
    lane.add_argument("--races", action="store_true", help="also CONNECT_RACE_TESTS")
    lane.add_argument(
        "--check", action="store_true", help=f"no build; only tests marked {CHECK_MARKS!r}"
    )
    lane.add_argument("--marks", help="with --check: this marker expression instead")
    lane.add_argument("--gate", action="store_true", help="no build; the gate's Connect slice")
    run = sub.add_parser("run", help="start, run one command with JAMMI_CONNECT_URL, stop")
    for cmd in (lane, run):
        cmd.add_argument(
            "--iceberg-rest",
            action="store_true",
            help="Iceberg's REST catalog server (started here) as the server's default "
            "catalog; for `lane`: no build, the process races on Iceberg",
        )
    run.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    state = Path(tempfile.mkdtemp(prefix="jammi-connect-"))
    server = ConnectServer(state_dir=state)
    stack = contextlib.ExitStack()
    try:
        if getattr(args, "iceberg_rest", False):
            server.table_format, server.format_jars = "iceberg", server_format_jars("iceberg")
            if not server.format_jars:
                raise SystemExit("connect lane --iceberg-rest: no Iceberg jars (make jars)")
            uri = stack.enter_context(serving(state / "rest"))
            create_namespace(uri, "default")  # where the server opens each session
            os.environ[URI_VARIABLE] = uri  # the tests' (tests/conftest.py rest_catalog_uri)
            server.catalog_confs = rest_catalog_confs(uri)
            print(f"Iceberg REST catalog server at {uri}", flush=True)
        server.start()
        print(f"Spark Connect server ready at {server.url} after "
              f"{time.monotonic() - started:.0f}s", flush=True)  # fmt: skip
        env = dict(os.environ, JAMMI_TEST_METHOD="connect", JAMMI_CONNECT_URL=server.url)
        if args.command == "run":
            command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
            code = subprocess.call(command, env=env)
        else:
            marks = (args.marks or CHECK_MARKS) if args.check else None
            if args.iceberg_rest:
                code = run_rest_races(env)
            else:
                code = run_lane(server, env, races=args.races, marks=marks, gate=args.gate)
    finally:
        server.stop()
        stack.close()
        shutil.rmtree(state, ignore_errors=True)
    print(f"connect lane: stopped; total {time.monotonic() - started:.0f}s", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
