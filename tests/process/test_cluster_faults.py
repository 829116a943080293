"""Faults on the cluster's side: `dbt run` over a Spark Thrift Server that is the driver of
an application on a standalone cluster (a master and two one-core workers on loopback,
scripts/spark_cluster.py), while a machine of the cluster or the server itself dies.

1. A worker SIGKILLed (with its executor) in the middle of a parquet mutable_table run
   with `changelog: true`: Spark runs the lost tasks again on the other executor, so the
   run commits once or fails with a clear message; the table holds the old or the new
   batch, the changelog each committed version once, and the next run converges.
2. The same in the middle of a topic publish: every offset one complete publish, no
   row index twice in one offset, and the next publish works.
3. The Thrift server SIGKILLed in the middle of a mutable_table run and started again on
   its state directory (Derby metastore, warehouse) and port: the run fails clearly, the
   table reads the old or (when the kill came after the commit) the new version, the
   changelog holds each committed version once, and the next run converges.

Where each fault fires is measured on a normal run of the same work (and again on every
recovery run: other jobs share the machine's two cores): a worker dies at a fraction of
the time one of the statements that run Spark jobs took, while an executor runs a task
of it; the server dies at a fraction of the run, or at the commit itself, found in the
run's own dbt.log (faults.py). A server killed with the claim on the next version held
leaves that claim to its lease (mutable_table/commit/rewrite_commit.py: a statement the
dead run sent could still be pending on a server): the next run is refused with a message
that says until when, and the run after the lease converges. Each scenario prints one
summary line.

Runs where `scripts/thrift_server.py faults` (or `lane`) started a cluster and set
JAMMI_CLUSTER_STATE; skipped elsewhere.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest

from dbt.adapters.jammi.common.clock import now_ms
from dbt.adapters.jammi.mutable_table.commit.rewrite_commit import claim_lease_ms
from tests.process.fault_outcomes import (
    COMMIT,
    MutableTable,
    Tally,
    fault_next_run,
    run_args,
)
from tests.process.faults import FaultPoint, FaultRig, cluster_from_env, start_server, topic_state
from tests.process.harness import DbtProject, check, first_line

CLUSTER_STATE = os.environ.get("JAMMI_CLUSTER_STATE")

pytestmark = [
    pytest.mark.thrift,
    pytest.mark.skipif(
        not CLUSTER_STATE,
        reason="needs a standalone cluster: JAMMI_CLUSTER_STATE, set by "
        "`scripts/thrift_server.py faults` (or `lane`)",
    ),
]

BASE_ROWS = 50_000  # fault_items' batch b: BASE_ROWS + b * GROWTH keys, all batch = b
CLAIMED_ROWS = 5_000  # fault_claimed: the same, smaller (only its commit matters)
GROWTH = 1_000
EVENTS = 500_000  # rows per topic publish: numbered in parallel (topic/row_index.py)
ITEMS, CLAIMED, EVENTS_MODEL = "fault_items", "fault_claimed", "fault_events"
TOPIC = "fault.events"

# The statements of a run that run Spark jobs (as dbt.log shows them).
VERSION_WRITE = r"insert overwrite directory '[^']*/v\d{10}_"
CHANGELOG_STAGING = r"insert overwrite directory '[^']*/_staging/changes_v"
PUBLISH_STAGING = r"insert overwrite directory '[^']*/_staging/(?!changes_v)"

WORKER_FAULTS = (  # workers 0, 1 (the other one when only it runs a task)
    FaultPoint("50% of the version write", 0.5, VERSION_WRITE),
    FaultPoint("50% of the changelog staging", 0.5, CHANGELOG_STAGING),
)
PUBLISH_FAULTS = (  # workers 0, 1
    FaultPoint("40% of the publish staging", 0.4, PUBLISH_STAGING),
    FaultPoint("75% of the publish staging", 0.75, PUBLISH_STAGING),
)
SERVER_FAULTS = (
    (ITEMS, FaultPoint("60% of the run", 0.6)),  # before the commit
    # In the commit: the claim on the next version held, the `set location` in flight.
    (CLAIMED, FaultPoint("commit sent", statement=COMMIT)),
    (ITEMS, FaultPoint("commit done", statement=COMMIT, completed=True)),  # after it
)
# The gate's fault slice runs each scenario's first points only (JAMMI_FAULT_POINTS=1,
# scripts/lane_map.py); the full cluster fault lane runs them all.
FAULT_POINTS = int(os.environ.get("JAMMI_FAULT_POINTS") or 0) or None
WORKER_FAULTS, PUBLISH_FAULTS = WORKER_FAULTS[:FAULT_POINTS], PUBLISH_FAULTS[:FAULT_POINTS]
SERVER_FAULTS = SERVER_FAULTS[:FAULT_POINTS]
# How a run refuses a claim whose holder has ended but whose lease has not (rewrite_commit)
CLAIM_HELD = "is claimed by a run that has ended"

ITEMS_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='parquet',
          changelog=true) }}
select cast(id as bigint) as id, cast({{ var('batch') }} as bigint) as batch,
  concat('batch ', {{ var('batch') }}, ' row ', id) as label
from range(ROWS + {{ var('batch') }} * GROWTH)
"""

EVENTS_SQL = f"""
{{{{ config(materialized='topic', topic_name='{TOPIC}', file_format='parquet') }}}}
select cast(id as bigint) as event_id, cast({{{{ var('batch') }}}} as bigint) as batch
from range({EVENTS})
"""


def items_sql(rows: int) -> str:
    return ITEMS_SQL.replace("ROWS", str(rows)).replace("GROWTH", str(GROWTH))


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory):
    cluster = cluster_from_env(CLUSTER_STATE or "")
    if cluster is None:
        pytest.fail(f"no cluster.json in JAMMI_CLUSTER_STATE={CLUSTER_STATE}")
    deadline = time.monotonic() + 30  # a server that just stopped gives its cores back
    while cluster.cores_in_use() and time.monotonic() < deadline:
        time.sleep(1)
    if cluster.cores_in_use():
        pytest.fail(
            f"another application holds {cluster.cores_in_use()} of the cluster's cores; "
            "the fault tests start their own Thrift server on it"
        )
    fault_rig = start_server(cluster, tmp_path_factory.mktemp("fault_server"))
    try:
        yield fault_rig
    finally:
        fault_rig.server.stop()
        for index, pid in enumerate(cluster.worker_pids):
            if not pid:
                cluster.start_worker(index)


@pytest.fixture(scope="module")
def project(rig: FaultRig, tmp_path_factory: pytest.TempPathFactory) -> DbtProject:
    return DbtProject(
        root=tmp_path_factory.mktemp("fault_project"),
        target=rig.target(f"faults_{uuid.uuid4().hex[:8]}"),
        models={
            f"{ITEMS}.sql": items_sql(BASE_ROWS),
            f"{CLAIMED}.sql": items_sql(CLAIMED_ROWS),
            f"{EVENTS_MODEL}.sql": EVENTS_SQL,
        },
    ).write()


@pytest.fixture(scope="module")
def items(project: DbtProject) -> MutableTable:
    """fault_items after two normal runs; the worker and the server faults share it."""
    table = MutableTable(project, project.target["schema"], ITEMS, BASE_ROWS, GROWTH)
    table.build(2)
    return table


def test_worker_killed_during_mutable_table_run(rig: FaultRig, items: MutableTable) -> None:
    tally = Tally(durations=[items.normal.seconds])
    for index, point in enumerate(WORKER_FAULTS):
        rig.full_strength()
        run = items.fault(rig, tally, point, f"worker{index}", worker=index % 2)
        if run is None:
            continue
        label = f"worker {run.victim} killed at {point.label} (batch {items.batch})"
        rig.cluster.start_worker(run.victim, wait=False)
        items.check_after_fault(rig, tally, run, label, lagged=False)
        failure = items.recover(rig, tally, label, f"worker{index}")
        if failure:
            tally.problems.append(f"{label}: the recovery run failed: {first_line(failure)}")
    rig.full_strength()
    tally.summary("worker killed in a mutable_table run (parquet, changelog)", WORKER_FAULTS)
    assert tally.problems == [], "\n".join(tally.problems)


def publish_problem(events: list[list[int]], published: list[int]) -> str | None:
    """None when the topic holds exactly the batches ``published``, one complete offset
    each, in offset order, every row index of an offset once (0 .. EVENTS - 1)."""
    for offset, rows, low, high, indexes, first, last in events:
        if (rows, indexes, first, last, low) != (EVENTS, EVENTS, 0, EVENTS - 1, high):
            return f"offset {offset} is not one complete publish: {events}"
    offsets = [e[0] for e in events]
    if offsets != sorted(set(offsets)) or [e[2] for e in events] != published:
        return f"batches {[e[2] for e in events]} at offsets {offsets}, published {published}"
    return None


def test_worker_killed_during_topic_publish(rig: FaultRig, project: DbtProject) -> None:
    schema = project.target["schema"]
    normal = project.run(run_args(EVENTS_MODEL, 1), "publish1")  # also the measure
    check(normal, "first publish")
    batch, published = 1, [1]
    tally = Tally(durations=[normal.seconds])
    for index, point in enumerate(PUBLISH_FAULTS):
        rig.full_strength()
        before = batch
        run, batch, normal = fault_next_run(
            rig, project, EVENTS_MODEL, batch, normal, tally, point, f"publish{index}",
            worker=index % 2,
        )  # fmt: skip
        published += list(range(before + 1, batch))  # runs that ended before the fault
        if run is None:
            continue
        label = f"worker {run.victim} killed at {point.label} (batch {batch})"
        rig.cluster.start_worker(run.victim, wait=False)
        state = topic_state(rig.sql, schema, EVENTS_MODEL, TOPIC)
        observed = "mixed"
        for name, batches in (("old", published), ("new", [*published, batch])):
            if publish_problem(state["events"], batches) is None and state["registrations"] == 1:
                observed = name
        if observed == "mixed":
            tally.problems.append(f"{label}: the topic holds {state}")
        tally.outcome(run, observed, label, committed_ok=False)
        published += [batch] if observed == "new" else []
        # The next publish works and adds exactly one complete offset.
        batch += 1
        following = project.run(run_args(EVENTS_MODEL, batch), f"publish{index}-next")
        check(following, f"{label}: the next publish")
        normal = following
        tally.durations.append(following.seconds)
        published.append(batch)
        problem = publish_problem(
            topic_state(rig.sql, schema, EVENTS_MODEL, TOPIC)["events"], published
        )
        if problem:
            tally.problems.append(f"{label}: after the next publish: {problem}")
        else:
            tally.counts["recovered"] += 1
    rig.full_strength()
    tally.summary("worker killed in a topic publish (parquet)", PUBLISH_FAULTS)
    assert tally.problems == [], "\n".join(tally.problems)


def claim_expiry_ms(rig: FaultRig, table: MutableTable) -> int:
    """When the last commit claim left on ``table`` reaches the end of its lease."""
    claims = rig.sql.rows(f"show tables in {table.schema} like '{table.model}__jammi_claim_v*'")
    created = [
        int(value)
        for claim in claims
        for key, value in rig.sql.rows(f"show tblproperties {table.schema}.{claim[1]}")
        if key == "jammi.created_ms"
    ]
    return max(created, default=now_ms()) + claim_lease_ms()


def test_thrift_server_killed_during_commit(rig: FaultRig, items: MutableTable) -> None:
    claimed = MutableTable(items.project, items.schema, CLAIMED, CLAIMED_ROWS, GROWTH)
    claimed.build(1)
    tally = Tally(durations=[items.normal.seconds])
    restarts: list[float] = []
    blocked = []  # (table, label, when its claim's lease ends): recovered after that
    for index, (model, point) in enumerate(SERVER_FAULTS):
        table = claimed if model == CLAIMED else items
        rig.full_strength()
        run = table.fault(rig, tally, point, f"server{index}", fault=rig.server.kill)
        if run is None:
            continue
        label = f"server killed at {point.label} of {model} (batch {table.batch})"
        started = time.monotonic()
        rig.server.start()  # same state directory and port: Derby reopens after kill -9
        restarts.append(time.monotonic() - started)
        table.check_after_fault(rig, tally, run, label, lagged=True)
        failure = table.recover(rig, tally, label, f"server{index}")
        if failure and CLAIM_HELD in failure:
            # The killed run held the claim on the next version, and a statement it sent
            # could still be pending on a server: the claim holds for its lease.
            tally.counts["refused within the lease"] += 1
            blocked.append((table, label, claim_expiry_ms(rig, table)))
        elif failure:
            tally.problems.append(f"{label}: the recovery run failed: {first_line(failure)}")
    for table, label, expiry in blocked:
        time.sleep(max(expiry - now_ms(), 0) / 1000 + 1)
        failure = table.recover(rig, tally, f"{label}, after the lease", f"{table.model}-lease")
        if failure:
            tally.problems.append(f"{label}: the run after the lease failed: {first_line(failure)}")
    restarted = f"{min(restarts):.0f}-{max(restarts):.0f}s" if restarts else "-"
    tally.summary(
        "Thrift server killed in a mutable_table run (parquet, changelog)",
        tuple(point for _, point in SERVER_FAULTS),
        f"; changelog-lagged={tally.counts['changelog lagged']}; refused-within-the-lease="
        f"{tally.counts['refused within the lease']}; restarts={len(restarts)} ({restarted} "
        "each, same port and Derby metastore)",
    )
    assert tally.problems == [], "\n".join(tally.problems)
