"""The test lanes in one place: the full matrix, the gate's slices, and which lanes a
changed file needs (docs/testing.md).

    python scripts/lane_map.py lanes --base origin/main    # the lanes a diff needs
    python scripts/lane_map.py lanes --paths dbt/x.py ...  # the same for named paths
    python scripts/lane_map.py lanes --run --base <rev>    # run them (`make test-affected`)
    python scripts/lane_map.py slice crash [pytest args]   # pytest on one gate slice
    python scripts/lane_map.py ignores                     # the gate's functional --ignore

- FULL_LANES: every lane of `make test-full`, as `make test` ran them before the gate;
  nothing in them is dropped.
- GATE_LANES and GATE_SLICES: `make test` (the gate, at most 30 minutes on 2 cores):
  each lane's machinery once, on a slice of its tests. The lane scripts read their slice
  here (`--gate`).
- PATH_RULES: a changed path's lanes. Every tracked product file matches at least one
  rule (tests/unit/test_lane_map.py); a file that matches none gets DEFAULT_LANES.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The full matrix, longest first (scripts/test_lanes.py starts them in this order).
# `cluster-lanes` runs the three lanes of ON_ONE_CLUSTER on one standalone cluster.
FULL_LANES = (
    "spark35-lane",
    "cluster-lanes",
    "delta-lane",
    "functional",
    "crash-lane",
    "iceberg-lane",
    "spark43-lane",
    "connect-lane",
    "thrift-iceberg-lane",
    "orc-lane",
    "checks",
)
ON_ONE_CLUSTER = ("thrift-lane", "thrift-delta-lane", "cluster-fault-lane")
# Every lane a path can need, longest first: the full matrix's, and the cluster lanes one
# by one where a change needs only one of them.
EVERY_NAMED_LANE = (
    "spark35-lane",
    "cluster-lanes",
    "thrift-lane",
    "delta-lane",
    "functional",
    "crash-lane",
    "iceberg-lane",
    "spark43-lane",
    "cluster-fault-lane",
    "thrift-delta-lane",
    "connect-lane",
    "thrift-iceberg-lane",
    "orc-lane",
    "checks",
)

# The gate (`make test`), longest first: the functional lane but for FUNCTIONAL_FULL_ONLY,
# and one slice of every other lane's machinery. The cluster slice runs the Thrift slice
# and the fault slice on one standalone cluster.
GATE_LANES = (
    "functional-gate",
    "spark35-gate",
    "cluster-gate",
    "delta-gate",
    "iceberg-gate",
    "connect-gate",
    "crash-gate",
    "checks",
)

MUTABLE = "tests/functional/mutable_table"

# The functional lane's files that only `make test-full` runs: whole-project and
# randomized checks and dbt's own macro suites, each longer than half a minute alone,
# whose machinery the gate's other functional tests already run.
FUNCTIONAL_FULL_ONLY = (
    f"{MUTABLE}/test_tenant_bound_build.py",  # the integration project built bound twice
    "tests/functional/scd2/test_scd2_randomized.py",  # random batches against a reference
    "tests/functional/adapter/test_ansi_mode.py",  # every materialization, ANSI on and off
    "tests/functional/adapter/test_utils.py",  # dbt.tests.adapter.utils' macro suites
)

# Each gate slice's pytest arguments (paths and node ids). Every slice names at least one
# test, and every path exists (tests/unit/test_lane_map.py).
GATE_SLICES: dict[str, tuple[str, ...]] = {
    # The MERGE applier, tombstones, the changelog across a crash, a conflict's re-plan,
    # and the path users take (Maven coordinates from the local repository).
    "delta": (
        f"{MUTABLE}/test_mutable_upsert.py::TestMutableUpsert::test_upsert_delete_and_idempotence",
        f"{MUTABLE}/test_mutable_upsert.py::TestMutableUpsert::"
        "test_bad_batches_into_an_existing_table_write_nothing",
        f"{MUTABLE}/test_tombstones.py::TestTombstones::test_late_older_change_stays_deleted",
        f"{MUTABLE}/test_tombstones.py::TestTombstones::test_tombstones_are_invisible_to_readers",
        f"{MUTABLE}/test_changelog.py::TestChangelog::"
        "test_events_are_the_diff_exactly_once_across_a_crash",
        f"{MUTABLE}/test_delta_merge_conflicts.py",
        "tests/functional/adapter/test_delta_from_maven.py",
    ),
    # The MERGE applier on Iceberg, where an existing table takes the batch-sourced MERGE
    # and its counts come from its own snapshot (commit/iceberg_merge.py): the run report's
    # counts, a snapshot feed's deletes, the checks inside the MERGE and a re-delivered
    # batch collapsed; its conflict re-plan, what Iceberg refuses, and a topic stored in
    # Iceberg: its publishes and its offset claim raced.
    "iceberg": (
        f"{MUTABLE}/test_mutable_upsert.py::TestMutableUpsert::test_upsert_delete_and_idempotence",
        f"{MUTABLE}/test_mutable_upsert.py::TestMutableUpsert::test_hard_deletes",
        f"{MUTABLE}/test_run_results.py::TestRunResults::test_mutable_table_counts_and_version",
        f"{MUTABLE}/test_redelivery.py",
        f"{MUTABLE}/test_delta_merge_conflicts.py",
        f"{MUTABLE}/test_iceberg_refusals.py",
        "tests/functional/topic/test_topic_publish.py",
        "tests/functional/topic/test_topic_concurrency.py",
    ),
    # Over a Thrift server on the standalone cluster: the connection and its executors,
    # the tenant guard's plan reader, every Spark type crossing Thrift, one race.
    "thrift": (
        "tests/functional/thrift/test_thrift_connection.py",
        f"{MUTABLE}/test_tenant_read_guard.py",
        f"{MUTABLE}/test_spark_types.py::TestEveryStepOfEachType",
        "tests/process/test_thrift_races.py::test_concurrent_upserts_of_different_keys",
    ),
    # On the same cluster after the Thrift slice: one worker kill, one server kill
    # (JAMMI_FAULT_POINTS=1: each scenario's first fault point).
    "faults": (
        "tests/process/test_cluster_faults.py::test_worker_killed_during_mutable_table_run",
        "tests/process/test_cluster_faults.py::test_thrift_server_killed_during_commit",
    ),
    # Over a Connect server: the connection, and the Python models with their tenant probes.
    "connect": (
        "tests/functional/connect",
        "tests/functional/python_models",
    ),
    # One kill point (JAMMI_CRASH_KILL_FRACTIONS, JAMMI_ROLLBACK_KILL_FRACTIONS).
    "crash": ("tests/process/test_crash_recovery.py",),
    # The compatibility line, Spark 3.5 (spark35-gate): one smoke test per materialization
    # on parquet (`-m smoke`), the Delta 3.3 MERGE applier with the path users take, and
    # Iceberg's counted change set (Spark 3.5 counts the change set before the MERGE).
    "spark35-smoke": (f"{MUTABLE}", "tests/functional/scd2", "tests/functional/topic"),
    "spark35-delta": (
        f"{MUTABLE}/test_mutable_upsert.py::TestMutableUpsert::test_upsert_delete_and_idempotence",
        "tests/functional/adapter/test_delta_from_maven.py",
    ),
    "spark35-iceberg": (
        f"{MUTABLE}/test_mutable_upsert.py::TestMutableUpsert::test_upsert_delete_and_idempotence",
        f"{MUTABLE}/test_run_results.py::TestRunResults::test_mutable_table_counts_and_version",
    ),
}


# The slices that only `make test-full` runs, as lanes of their own, and their settings:
# the orc lane runs the row rules' files with orc in parquet's place in the rewrite
# applier's classes (tests/functional/mutable_table/util.py, REWRITE_FORMAT).
FULL_SLICES: dict[str, tuple[str, ...]] = {
    "orc": (
        f"{MUTABLE}/test_mutable_upsert.py",
        f"{MUTABLE}/test_tombstones.py",
        f"{MUTABLE}/test_truncates.py",
        f"{MUTABLE}/test_rule_columns.py",
        f"{MUTABLE}/test_version_groups.py",
    ),
}
FULL_SLICE_ENV: dict[str, dict[str, str]] = {"orc": {"JAMMI_TEST_FILE_FORMAT": "orc"}}
SLICES = {**GATE_SLICES, **FULL_SLICES}


def gate_slice_name(file_format: str, spark_version: str) -> str:
    """The gate slice of the Delta or Iceberg lane for this Spark version: the home
    line's (``delta``, ``iceberg``), or the compatibility line's (``spark35-...``)."""
    from dbt.adapters.jammi.engine.jar_releases import COMPATIBILITY_LINE, spark_line

    line = spark_line(spark_version)
    return f"spark35-{file_format}" if line == COMPATIBILITY_LINE else file_format


# A slice's settings: the crash slice's one kill point (a fraction of a measured run) and
# no rollback kill; the fault slice's first fault point of each scenario; two rounds of
# the Thrift slice's race (six on the full Thrift lane).
GATE_SLICE_ENV: dict[str, dict[str, str]] = {
    "crash": {"JAMMI_CRASH_KILL_FRACTIONS": "0.5", "JAMMI_ROLLBACK_KILL_FRACTIONS": ""},
    "faults": {"JAMMI_FAULT_POINTS": "1"},
    "thrift": {"JAMMI_RACE_ROUNDS": "2"},
}

EVERY_LANE = EVERY_NAMED_LANE
# The other Spark lines' lanes: what a Spark-version-specific path runs on besides the
# home line (docs/compatibility.md).
COMPAT_LANES = ("spark35-lane", "spark43-lane")
MUTABLE_LANES = ("functional", "delta-lane", "iceberg-lane", "orc-lane")
MERGE_LANES = ("delta-lane", "iceberg-lane", "thrift-delta-lane", "thrift-iceberg-lane")
REWRITE_LANES = ("functional", "crash-lane", "cluster-fault-lane", "thrift-lane", "orc-lane")
REMOTE_LANES = ("thrift-lane", "connect-lane")
# thrift-iceberg-lane and connect-lane race publishes on Iceberg over a REST catalog.
TOPIC_LANES = (*MUTABLE_LANES, "thrift-lane", "cluster-fault-lane", "thrift-iceberg-lane")
JAR_LANES = (
    "delta-lane",
    "iceberg-lane",
    "connect-lane",
    "thrift-delta-lane",
    "thrift-iceberg-lane",
    "crash-lane",
)

# A changed path's lanes: the union of every rule it matches (fnmatch patterns, `*`
# crosses folders). Docs and the changelog need no lane; `checks` runs for every change.
PATH_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # What every lane runs through: the build, the test configuration, the lane runner.
    ("Makefile", EVERY_LANE),
    ("pyproject.toml", EVERY_LANE),
    ("constraints.txt", EVERY_LANE),
    (".ci/run", EVERY_LANE),
    ("tests/conftest.py", EVERY_LANE),
    ("scripts/test_lanes.py", EVERY_LANE),
    ("scripts/lane_map.py", ("checks",)),
    ("scripts/race_repeats.py", ("checks",)),
    ("scripts/jaffle_shop_check.py", ("checks",)),
    ("scripts/lane_report.py", COMPAT_LANES),
    ("scripts/check_java.py", EVERY_LANE),
    ("scripts/fetch_jars.py", JAR_LANES),
    ("scripts/hive_lock_tables.py", ("iceberg-lane", "thrift-iceberg-lane")),
    ("scripts/iceberg_probe.py", ("iceberg-lane", "thrift-iceberg-lane")),
    ("scripts/delta_lane.py", ("delta-lane",)),
    ("scripts/iceberg_lane.py", ("iceberg-lane",)),
    ("scripts/iceberg_rest_catalog.py", ("iceberg-lane", "thrift-iceberg-lane", "connect-lane")),
    ("scripts/connect_server.py", ("connect-lane", "spark43-lane")),
    ("scripts/spark_cluster.py", ("thrift-lane", "thrift-delta-lane", "cluster-fault-lane")),
    (
        "scripts/spark_thrift_server.py",
        ("thrift-lane", "thrift-delta-lane", "thrift-iceberg-lane", "connect-lane"),
    ),
    (
        "scripts/thrift_server.py",
        ("thrift-lane", "thrift-delta-lane", "thrift-iceberg-lane", "cluster-fault-lane"),
    ),
    ("scripts/thrift_lane.py", ("thrift-lane", "thrift-delta-lane", "cluster-fault-lane")),
    ("scripts/docs_lineage_check.py", ("checks",)),
    ("scripts/house_metrics.py", ("checks",)),
    ("scripts/browser/*", ("checks",)),
    ("constraints-spark35.txt", ("spark35-lane",)),
    ("constraints-spark43.txt", ("spark43-lane",)),
    (".github/*", COMPAT_LANES),
    # The adapter's own modules.
    ("dbt/adapters/jammi/__init__.py", ("functional",)),
    ("dbt/adapters/jammi/__version__.py", ("functional",)),
    ("dbt/include/jammi/__init__.py", ("functional",)),
    ("dbt/adapters/jammi/impl.py", (*MUTABLE_LANES, *REMOTE_LANES)),
    ("dbt/adapters/jammi/connections.py", ("functional", *REMOTE_LANES, *COMPAT_LANES)),
    ("dbt/adapters/jammi/credentials.py", ("functional", *REMOTE_LANES)),
    ("dbt/adapters/jammi/common/*", (*MUTABLE_LANES, *COMPAT_LANES)),
    ("dbt/adapters/jammi/common/connect_url.py", ("connect-lane",)),
    ("dbt/adapters/jammi/engine/*", ("functional", *COMPAT_LANES)),
    ("dbt/adapters/jammi/engine/connect.py", ("connect-lane",)),
    ("dbt/adapters/jammi/engine/hive_compat.py", ("thrift-lane",)),
    ("dbt/adapters/jammi/engine/commit_conflicts.py", MERGE_LANES),
    ("dbt/adapters/jammi/engine/delta_replace.py", ("delta-lane", "thrift-delta-lane")),
    ("dbt/adapters/jammi/engine/jar_releases.py", JAR_LANES),
    ("dbt/adapters/jammi/engine/session.py", ("crash-lane",)),
    ("dbt/adapters/jammi/engine/spark_errors.py", REMOTE_LANES),
    ("dbt/adapters/jammi/mutable_table/*", MUTABLE_LANES),
    ("dbt/adapters/jammi/mutable_table/column_types.py", (*COMPAT_LANES,)),
    ("dbt/adapters/jammi/mutable_table/exact_casts.py", (*COMPAT_LANES,)),
    ("dbt/adapters/jammi/mutable_table/redelivery.py", MERGE_LANES),
    ("dbt/adapters/jammi/mutable_table/adoption.py", MERGE_LANES),
    ("dbt/adapters/jammi/mutable_table/schema_evolution.py", (*MERGE_LANES, *COMPAT_LANES)),
    ("dbt/adapters/jammi/mutable_table/commit/merge_commit.py", MERGE_LANES),
    # Iceberg's batch-sourced MERGE runs on Spark >= 4.1; 3.5 counts the change set first
    ("dbt/adapters/jammi/mutable_table/commit/iceberg_merge.py", (*MERGE_LANES, *COMPAT_LANES)),
    ("dbt/adapters/jammi/mutable_table/commit/run_plan.py", (*MERGE_LANES, *COMPAT_LANES)),
    ("dbt/adapters/jammi/mutable_table/commit/rewrite_commit.py", REWRITE_LANES),
    ("dbt/adapters/jammi/mutable_table/commit/ownership.py", REWRITE_LANES),
    ("dbt/adapters/jammi/mutable_table/commit/leftovers.py", REWRITE_LANES),
    ("dbt/adapters/jammi/mutable_table/commit/commit_service.py", (*MERGE_LANES, *REWRITE_LANES)),
    ("dbt/adapters/jammi/mutable_table/rules/changelog*.py", ("crash-lane", "cluster-fault-lane")),
    ("dbt/adapters/jammi/mutable_table/commit/branch_commit.py", ("crash-lane",)),
    ("dbt/adapters/jammi/mutable_table/rules/tombstones.py", ("crash-lane",)),
    ("dbt/adapters/jammi/mutable_table/rules/truncates.py", ("crash-lane",)),
    ("dbt/adapters/jammi/mutable_table/hive_adoption.py", ("crash-lane",)),
    ("dbt/adapters/jammi/mutable_table/rules/identity.py", ("thrift-lane",)),
    # Iceberg's identity mark rides the branch commit (tests/process/test_iceberg_identity_crash.py)
    ("dbt/adapters/jammi/mutable_table/rules/identity*.py", ("crash-lane",)),
    ("dbt/adapters/jammi/mutable_table/iceberg_support.py", ("thrift-iceberg-lane",)),
    ("dbt/adapters/jammi/mutable_table/versions/iceberg_*", ("thrift-iceberg-lane",)),
    ("dbt/adapters/jammi/python_models/*", ("functional", "delta-lane", "connect-lane")),
    ("dbt/adapters/jammi/tenancy/*", (*MUTABLE_LANES, *REMOTE_LANES)),
    ("dbt/adapters/jammi/tenancy/plan_*.py", ("thrift-delta-lane", *COMPAT_LANES)),
    ("dbt/adapters/jammi/tenancy/statement_plans.py", ("thrift-delta-lane", *COMPAT_LANES)),
    ("dbt/adapters/jammi/topic/*", TOPIC_LANES),
    ("dbt/adapters/jammi/unit_testing/*", ("functional", "delta-lane")),
    # The macros.
    ("dbt/include/jammi/dbt_project.yml", (*MUTABLE_LANES, *REMOTE_LANES)),
    ("dbt/include/jammi/log4j2.properties", (*REMOTE_LANES, "functional")),
    ("dbt/include/jammi/*profile*.yml", ("functional",)),
    ("dbt/include/jammi/macros/generic_tests/*", MUTABLE_LANES),
    ("dbt/include/jammi/macros/dbt_spark_overrides/*", (*MUTABLE_LANES, *REMOTE_LANES)),
    ("dbt/include/jammi/macros/dbt_spark_overrides/table.sql", ("delta-lane", "iceberg-lane")),
    ("dbt/include/jammi/macros/model_helpers/*", (*MUTABLE_LANES, "thrift-lane")),
    ("dbt/include/jammi/macros/operations/*", MUTABLE_LANES),
    ("dbt/include/jammi/macros/python_models/*", ("functional", "connect-lane")),
    ("dbt/include/jammi/macros/topic/*", TOPIC_LANES),
    ("dbt/include/jammi/macros/mutable_table/*", MUTABLE_LANES),
    ("dbt/include/jammi/macros/mutable_table/storage_tables.sql", ("delta-lane", "iceberg-lane")),
    ("dbt/include/jammi/macros/mutable_table/apply_merge.sql", MERGE_LANES),
    ("dbt/include/jammi/macros/mutable_table/merge_batch.sql", MERGE_LANES),
    ("dbt/include/jammi/macros/mutable_table/apply_rewrite.sql", REWRITE_LANES),
    ("dbt/include/jammi/macros/mutable_table/planner/tombstones.sql", ("crash-lane",)),
    # The integration project: built on the embedded session (functional, bound to two
    # tenants) and over Thrift and Connect.
    ("integration_project/*", ("functional", *REMOTE_LANES)),
    # Tests: a file's own lanes.
    ("tests/unit/*", ("checks",)),
    ("tests/scd2_*.py", ("checks", "functional")),
    ("tests/capture_plans.py", ("checks",)),  # writes the golden plans the unit tests read
    ("tests/functional/*", ("functional",)),
    (f"{MUTABLE}/*", ("delta-lane",)),
    (f"{MUTABLE}/util.py", ("orc-lane",)),
    *((path, ("orc-lane",)) for path in FULL_SLICES["orc"]),
    ("tests/functional/scd2/*", ("delta-lane", "iceberg-lane")),
    ("tests/functional/topic/*", ("delta-lane", "iceberg-lane", "thrift-lane")),
    ("tests/functional/adapter/test_delta_*", ("delta-lane",)),
    ("tests/functional/adapter/test_iceberg_*", ("iceberg-lane",)),
    ("tests/functional/thrift/*", ("thrift-lane",)),
    ("tests/functional/connect/*", ("connect-lane",)),
    ("tests/functional/python_models/*", ("delta-lane", "connect-lane")),
    ("tests/process/*", ("crash-lane",)),
    ("tests/process/test_cluster_faults.py", ("cluster-fault-lane",)),
    ("tests/process/fault*.py", ("cluster-fault-lane",)),
    ("tests/process/test_thrift_races.py", ("thrift-lane", "thrift-delta-lane", "connect-lane")),
    ("tests/process/test_identity_races.py", ("thrift-lane", "thrift-delta-lane")),
    ("tests/process/test_rollback_race.py", ("thrift-lane",)),
    ("tests/process/test_rest_catalog_races.py", ("iceberg-lane",)),
    ("tests/process/test_tail.py", ("thrift-lane",)),
    ("bench/*", ("checks",)),
)

# A product file no rule names (tests/unit/test_lane_map.py keeps this from happening).
DEFAULT_LANES = ("functional", "delta-lane")
# Paths no lane tests: what users and maintainers read.
NO_LANE = ("*.md", "docs/*", ".gitignore", "LICENSE*")


def rules_for(path: str) -> list[tuple[str, tuple[str, ...]]]:
    """The rules ``path`` matches."""
    return [(pattern, lanes) for pattern, lanes in PATH_RULES if fnmatch.fnmatch(path, pattern)]


def lanes_for(paths: list[str]) -> list[str]:
    """The lanes the changed ``paths`` need, in EVERY_NAMED_LANE's order; `checks`
    whenever anything outside the docs changed. Two or more of the lanes that share one
    cluster become `cluster-lanes`."""
    wanted: set[str] = set()
    for path in paths:
        if any(fnmatch.fnmatch(path, pattern) for pattern in NO_LANE):
            continue
        matched = rules_for(path)
        wanted.update(lane for _, lanes in matched for lane in lanes)
        if not matched:
            wanted.update(DEFAULT_LANES)
        wanted.add("checks")
    if len(wanted & set(ON_ONE_CLUSTER)) >= 2:
        wanted = (wanted - set(ON_ONE_CLUSTER)) | {"cluster-lanes"}
    return [lane for lane in EVERY_NAMED_LANE if lane in wanted]


def changed_paths(base: str, head: str | None = None) -> list[str]:
    """Files changed between ``base`` and ``head`` (a revision), or between ``base`` and
    the work tree with its untracked files."""
    revisions = [base, head] if head else [base]
    diff = subprocess.run(
        ["git", "diff", "--name-only", *revisions, "--"], cwd=REPO, capture_output=True, text=True
    )
    if diff.returncode != 0:
        raise SystemExit(f"lane_map: git diff {base} failed: {diff.stderr.strip()}")
    if head:
        return sorted(set(diff.stdout.split()))
    untracked = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted({*diff.stdout.split(), *untracked.stdout.split()})


def run_slice(name: str, pytest_args: list[str]) -> int:
    """pytest on the slice ``name`` (a gate slice, or a slice of the full matrix) with the
    slice's settings (GATE_SLICE_ENV, FULL_SLICE_ENV), from the repository's root, with
    this interpreter."""
    env = dict(os.environ, **GATE_SLICE_ENV.get(name, {}), **FULL_SLICE_ENV.get(name, {}))
    command = [sys.executable, "-m", "pytest", *SLICES[name], "-q", "-rs"]
    command += ["-p", "no:cacheprovider", "--durations=10", *pytest_args]
    print(f"lane_map: slice {name}: {' '.join(command[3:])}", flush=True)
    return subprocess.call(command, cwd=REPO, env=env)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lanes = sub.add_parser("lanes", help="the lanes of a diff or of named paths")
    given = lanes.add_mutually_exclusive_group(required=True)
    given.add_argument("--base", help="a git revision: the lanes of what changed since it")
    given.add_argument("--paths", nargs="+", help="the lanes of these paths")
    lanes.add_argument("--head", help="with --base: up to this revision, not the work tree")
    lanes.add_argument("--run", action="store_true", help="run the lanes (test_lanes.py)")
    lanes.add_argument("--slots", type=int, default=2)
    one = sub.add_parser("slice", help="pytest on one slice (extra pytest arguments after)")
    one.add_argument("name", choices=sorted(SLICES))
    sub.add_parser("ignores", help="pytest's --ignore options for FUNCTIONAL_FULL_ONLY")
    args, rest = parser.parse_known_args(argv)
    if args.command == "slice":
        return run_slice(args.name, rest)
    if args.command == "ignores":
        print(" ".join(f"--ignore={path}" for path in FUNCTIONAL_FULL_ONLY))
        return 0
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    paths = args.paths or changed_paths(args.base, args.head)
    chosen = lanes_for(paths)
    print(f"lane_map: {len(paths)} changed path(s) -> {', '.join(chosen) or 'no lane'}")
    for path in paths:
        named = sorted({lane for _, matched in rules_for(path) for lane in matched})
        print(f"  {path}: {', '.join(named) or '-'}")
    if not args.run or not chosen:
        return 0
    runner = [sys.executable, str(REPO / "scripts" / "test_lanes.py"), "--slots"]
    return subprocess.call([*runner, str(args.slots), *chosen], cwd=REPO)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
