"""The Thrift lanes' steps (`make thrift-lane`, `make thrift-delta-lane`,
`make cluster-fault-lane`), run by `scripts/thrift_server.py lane` / `faults` around a
server (and a standalone cluster) that script starts: which tests run over thrift, the
integration project's build, and the fault tests on the cluster."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

from spark_cluster import StandaloneCluster
from spark_thrift_server import REPO_ROOT, ThriftServer, server_env

LANE_TEST_DIRS = [
    "tests/functional/thrift",
    "tests/functional/mutable_table",
    "tests/functional/scd2",  # mutable_table's history: scd2 mode
    "tests/functional/topic",
    "tests/process/test_thrift_races.py",  # two dbt processes racing on one table or topic
    "tests/process/test_identity_races.py",  # two dbt processes numbering one identity table
    "tests/process/test_rollback_race.py",  # a rollback racing a run (parquet)
    "tests/process/test_tail.py",  # the live tail following publishes of other processes
]

# Faults on the cluster's side (own servers on the lane's cluster, after the lane's server).
FAULT_TESTS = ["tests/process/test_cluster_faults.py"]

# On a Delta server the lane runs what only a Delta server can show: the tenant guard
# reading Delta's one-line MERGE through the server (the rest of Delta's printed plans,
# V2 CTAS included, are golden files read by tests/unit/tenancy/test_golden_plans.py),
# a bound topic's reads, and two dbt processes racing on Delta tables and topics (their
# publishes included). Everything else runs on Delta in the embedded Delta lane
# and over thrift on parquet. The whole set on a Delta server, integration project included
# (about 50 minutes on 2 cores), is `lane --delta --all` (`make thrift-delta-lane-all`).
DELTA_LANE_TESTS = [
    "tests/functional/mutable_table/test_tenant_read_guard.py",
    # the batch-sourced MERGE's checks: the engine's error must reach dbt through Thrift
    "tests/functional/mutable_table/test_mutable_upsert.py::TestMutableUpsert::"
    "test_bad_batches_into_an_existing_table_write_nothing",
    "tests/functional/topic/test_topic_retention.py::TestTopicTenantScope",
    "tests/process/test_thrift_races.py",
    "tests/process/test_identity_races.py",
]

# On an Iceberg server (`lane --iceberg --local`): two dbt processes racing on an Iceberg
# table (Iceberg commits optimistically: one commits, the other re-plans; 0 lost updates),
# publishing to topics on an Iceberg session, and racing inserts numbered by an
# identity_column (the branch commit's fast-forward refuses the second run, which
# re-plans). The features run on Iceberg in the embedded Iceberg lane
# (scripts/iceberg_lane.py).
ICEBERG_LANE_TESTS = ["tests/process/test_thrift_races.py", "tests/process/test_identity_races.py"]

FORMAT_LANE_TESTS = {"delta": DELTA_LANE_TESTS, "iceberg": ICEBERG_LANE_TESTS}


def run_lane(
    server: ThriftServer,
    lane_tests: list[str],
    build: bool = True,
    settings: Optional[dict[str, str]] = None,
) -> int:
    """integration_project/ with `--target thrift` (unless ``build`` is False), then
    ``lane_tests`` over thrift (on a Delta or Iceberg server: `file_format: auto` builds
    that format's tables, and the tests run with JAMMI_TEST_FILE_FORMAT set to it), with
    the environment variables ``settings`` (the gate's slice settings)."""
    env = dict(server_env(server), **(settings or {}))
    fmt = server.table_format or "parquet"
    bin_dir = Path(sys.executable).parent
    results: list[tuple[str, int, float]] = []

    def step(name: str, command: list[str], cwd: Path, step_env: dict[str, str]) -> int:
        print(f"\nthrift lane: {name}: {' '.join(command)}", flush=True)
        started = time.monotonic()
        code = subprocess.call(command, cwd=cwd, env=step_env)
        results.append((name, code, time.monotonic() - started))
        return code

    project = REPO_ROOT / "integration_project"
    # Its own target/log paths: never clobbers integration_project/target of a parallel run.
    scratch = Path(tempfile.mkdtemp(prefix="jammi-thrift-lane-"))
    dbt_build = [str(bin_dir / "dbt"), "build", "--profiles-dir", ".", "--target", "thrift"]
    dbt_build += ["--target-path", str(scratch / "target"), "--log-path", str(scratch / "logs")]
    if build:
        step("dbt build integration_project (target thrift)", dbt_build, project, env)
    shutil.rmtree(scratch, ignore_errors=True)
    test_dirs = [d for d in lane_tests if (REPO_ROOT / d.split("::")[0]).exists()]
    missing = sorted(set(lane_tests) - set(test_dirs))
    if missing:
        print(f"thrift lane: not present yet, skipped: {', '.join(missing)}")
    if test_dirs:
        step(
            f"feature tests (JAMMI_TEST_METHOD=thrift, file_format {fmt})",
            [
                sys.executable,
                "-m",
                "pytest",
                *test_dirs,
                "-q",
                "-p",
                "no:cacheprovider",
                "--durations=10",
            ],
            REPO_ROOT,
            dict(
                env,
                JAMMI_TEST_METHOD="thrift",
                JAMMI_TEST_FILE_FORMAT=fmt,
                JAMMI_THRIFT_CLUSTER="1" if server.cluster_confs else "0",
            ),
        )
    print(f"\nthrift lane ({fmt}) summary:")
    for name, code, seconds in results:
        print(f"  {'ok  ' if code == 0 else 'FAIL'} {name} ({seconds:.0f}s, exit {code})")
    return max((code for _, code, _ in results), default=0)


def run_fault_tests(
    cluster: StandaloneCluster,
    tests: Sequence[str] = tuple(FAULT_TESTS),
    settings: Optional[dict[str, str]] = None,
) -> int:
    """tests/process/test_cluster_faults.py on ``cluster``: a worker SIGKILLed under a
    run and under a publish, the Thrift server SIGKILLed in a commit and restarted (the
    gate: ``tests`` and ``settings`` of its fault slice, scripts/lane_map.py)."""
    command = [sys.executable, "-m", "pytest", *tests, "-q", "-p", "no:cacheprovider"]
    print(f"\nthrift lane: fault tests on the cluster: {' '.join(command)}", flush=True)
    started = time.monotonic()
    # A claim left by a killed run blocks its table for the lease; the lane waits one out,
    # so it runs with the shortest lease the adapter accepts (40 s instead of 120 s).
    env = dict(
        os.environ, JAMMI_CLUSTER_STATE=str(cluster.state_dir), JAMMI_CLAIM_LEASE_SECONDS="40"
    )
    env.update(settings or {})
    code = subprocess.call(command, cwd=REPO_ROOT, env=env)
    print(
        f"  {'ok  ' if code == 0 else 'FAIL'} fault tests on the cluster "
        f"({time.monotonic() - started:.0f}s, exit {code})"
    )
    return code
