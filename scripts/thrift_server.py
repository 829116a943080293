"""The Spark Thrift Server's command line (the server is scripts/spark_thrift_server.py;
the lanes' steps are scripts/thrift_lane.py).

Usage:
  python scripts/thrift_server.py start [--state-dir DIR]   # prints host/port, returns
  python scripts/thrift_server.py stop  [--state-dir DIR]
  python scripts/thrift_server.py run -- CMD ...             # server around one command
  python scripts/thrift_server.py lane                       # the `make thrift-lane` lane

`run` and `lane` export JAMMI_THRIFT_HOST / JAMMI_THRIFT_PORT to what they start.
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
from lane_map import GATE_SLICE_ENV, GATE_SLICES  # noqa: E402
from spark_cluster import running_cluster  # noqa: E402
from spark_thrift_server import (  # noqa: E402
    DEFAULT_STATE_DIR,
    ThriftServer,
    pyspark_home,
    running_thrift_server,
    server_env,
    server_format_jars,
)
from thrift_lane import FORMAT_LANE_TESTS, LANE_TEST_DIRS, run_fault_tests, run_lane  # noqa: E402


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("start", "stop"):
        cmd = sub.add_parser(name)
        cmd.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR)
    run = sub.add_parser("run", help="start, run one command with JAMMI_THRIFT_* set, stop")
    lane = sub.add_parser("lane", help="start, dbt build + feature tests over thrift, stop")
    for cmd in (run, lane):
        cmd.add_argument(
            "--delta",
            action="store_true",
            help="a server with Delta Lake (JAMMI_DELTA_JARS, else .jars/, `make jars`)",
        )
        cmd.add_argument(
            "--iceberg",
            action="store_true",
            help="a server with Iceberg's SparkSessionCatalog (JAMMI_ICEBERG_JARS, else "
            ".jars/, `make jars`)",
        )
        cmd.add_argument(
            "--local",
            action="store_true",
            help="the server in local mode (one JVM) instead of as the driver of an "
            "application on a standalone cluster (a master and two workers on loopback)",
        )
        cmd.add_argument(
            "--rest",
            action="store_true",
            help="with --iceberg: Iceberg's REST catalog server (started here, over a JDBC "
            "catalog) as the server's default catalog, as production catalog services are",
        )
    lane.add_argument(
        "--all",
        action="store_true",
        help="with --delta or --iceberg: every feature test, not only the format's slice",
    )
    run.add_argument("argv", nargs=argparse.REMAINDER)
    sub.add_parser("faults", help="a standalone cluster and the fault tests on it, no lane")
    sub.add_parser(
        "cluster-lanes",
        help="one standalone cluster for the Thrift lane, the Delta Thrift lane and the "
        "cluster fault lane, one after another",
    )
    sub.add_parser(
        "gate",
        help="one standalone cluster: the gate's Thrift slice over a server on it, then "
        "its fault slice (scripts/lane_map.py)",
    )
    args = parser.parse_args(argv)

    if args.command == "start":
        server = ThriftServer(state_dir=args.state_dir).start()
        print(f"Spark Thrift Server ready: host={server.host} port={server.port} pid={server.pid}")
        print(f"export JAMMI_THRIFT_HOST={server.host} JAMMI_THRIFT_PORT={server.port}")
        return 0
    if args.command == "stop":
        found = ThriftServer.from_state_dir(args.state_dir)
        if found is None:
            print(f"no server recorded in {args.state_dir}")
            return 0
        pid = found.pid
        found.stop()
        print(f"stopped Spark Thrift Server pid={pid} (process group)")
        return 0

    # SIGTERM (CI cancelling the job) unwinds like Ctrl-C, so the server is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    if args.command == "faults":
        cluster_dir = Path(tempfile.mkdtemp(prefix="jammi-cluster-"))
        try:
            with running_cluster(cluster_dir, pyspark_home()) as cluster:
                return run_fault_tests(cluster)
        finally:
            shutil.rmtree(cluster_dir, ignore_errors=True)
    if args.command == "gate":
        return run_gate(started)
    if args.command == "cluster-lanes":
        return run_cluster_lanes(started)
    table_format = next((f for f in ("delta", "iceberg") if getattr(args, f, False)), None)
    format_jars = None
    if table_format:
        format_jars = server_format_jars(table_format)
        if not format_jars:
            print(
                f"thrift lane ({table_format}) SKIPPED: no {table_format} jars "
                f"(JAMMI_{table_format.upper()}_JARS, or make jars)"
            )
            required = os.environ.get(f"JAMMI_{table_format.upper()}_REQUIRED") == "1"
            return 1 if required else 0
    if args.rest and table_format != "iceberg":
        parser.error("--rest needs --iceberg")
    with contextlib.ExitStack() as stack:
        catalog_confs = None
        if args.rest:
            rest_dir = Path(tempfile.mkdtemp(prefix="jammi-rest-"))
            stack.callback(shutil.rmtree, rest_dir, ignore_errors=True)
            uri = stack.enter_context(serving(rest_dir))
            create_namespace(uri, "default")  # where the server opens each session
            os.environ[URI_VARIABLE] = uri  # the tests' (tests/conftest.py rest_catalog_uri)
            catalog_confs = rest_catalog_confs(uri)
            print(f"Iceberg REST catalog server at {uri}", flush=True)
        cluster = None
        if not args.local:
            cluster_dir = Path(tempfile.mkdtemp(prefix="jammi-cluster-"))
            stack.callback(shutil.rmtree, cluster_dir, ignore_errors=True)
            cluster = stack.enter_context(running_cluster(cluster_dir, pyspark_home()))
            print(
                f"Spark standalone cluster ready at {cluster.url} ({cluster.workers} workers, "
                f"{cluster.total_cores} cores) after {time.monotonic() - started:.0f}s",
                flush=True,
            )
        with running_thrift_server(
            table_format=table_format,
            format_jars=format_jars,
            cluster=cluster,
            catalog_confs=catalog_confs,
        ) as server:
            print(
                f"Spark Thrift Server ready on {server.host}:{server.port} "
                f"({'on ' + cluster.url if cluster else 'local mode'}) "
                f"after {time.monotonic() - started:.0f}s",
                flush=True,
            )
            if args.command == "run":
                command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
                if not command:
                    parser.error("run needs a command after --")
                env = server_env(server)
                if cluster:
                    env["JAMMI_CLUSTER_STATE"] = str(cluster.state_dir)
                code = subprocess.call(command, env=env)
            else:
                subset = table_format is not None and not args.all
                tests = FORMAT_LANE_TESTS[table_format] if subset else LANE_TEST_DIRS
                code = run_lane(server, tests, build=not subset)
    print(f"thrift lane: stopped; total {time.monotonic() - started:.0f}s", flush=True)
    return code


def run_cluster_lanes(started: float) -> int:
    """`make cluster-lanes` (the full matrix): one standalone cluster, on it in turn a
    Thrift server for the Thrift lane (integration project and LANE_TEST_DIRS), a Delta
    Thrift server for the Delta Thrift lane (DELTA_LANE_TESTS), and the fault tests' own
    servers. Each server is its own application and stops before the next starts."""
    delta_jars = server_format_jars("delta")
    codes: list[tuple[str, int]] = []
    cluster_dir = Path(tempfile.mkdtemp(prefix="jammi-cluster-"))
    try:
        with running_cluster(cluster_dir, pyspark_home()) as cluster:
            print(f"Spark standalone cluster ready at {cluster.url} after "
                  f"{time.monotonic() - started:.0f}s", flush=True)  # fmt: skip
            with running_thrift_server(cluster=cluster) as server:
                codes.append(("thrift lane", run_lane(server, LANE_TEST_DIRS)))
            if delta_jars:
                with running_thrift_server(
                    table_format="delta", format_jars=delta_jars, cluster=cluster
                ) as server:
                    tests = FORMAT_LANE_TESTS["delta"]
                    codes.append(("Delta Thrift lane", run_lane(server, tests, build=False)))
            else:
                print("Delta Thrift lane SKIPPED: no delta jars (JAMMI_DELTA_JARS, or make jars)")
                required = os.environ.get("JAMMI_DELTA_REQUIRED") == "1"
                codes.append(("Delta Thrift lane (no jars)", 1 if required else 0))
            codes.append(("cluster fault lane", run_fault_tests(cluster)))
    finally:
        shutil.rmtree(cluster_dir, ignore_errors=True)
    print(f"cluster lanes: total {time.monotonic() - started:.0f}s")
    for name, code in codes:
        print(f"  {'ok  ' if code == 0 else 'FAIL'} {name} (exit {code})")
    return max(code for _, code in codes)


def run_gate(started: float) -> int:
    """The gate's cluster slice: one standalone cluster for both halves, the Thrift
    slice over a server on it (no integration-project build; the functional lane builds
    it), then, with that server stopped, the fault slice's own servers on it."""
    cluster_dir = Path(tempfile.mkdtemp(prefix="jammi-cluster-"))
    try:
        with running_cluster(cluster_dir, pyspark_home()) as cluster:
            print(
                f"Spark standalone cluster ready at {cluster.url} after "
                f"{time.monotonic() - started:.0f}s",
                flush=True,
            )
            with running_thrift_server(cluster=cluster) as server:
                tests, settings = list(GATE_SLICES["thrift"]), GATE_SLICE_ENV["thrift"]
                code = run_lane(server, tests, build=False, settings=settings)
            faults = run_fault_tests(cluster, GATE_SLICES["faults"], GATE_SLICE_ENV["faults"])
    finally:
        shutil.rmtree(cluster_dir, ignore_errors=True)
    print(f"thrift gate: stopped; total {time.monotonic() - started:.0f}s", flush=True)
    return code or faults


if __name__ == "__main__":
    sys.exit(main())
