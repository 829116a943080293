"""Faults on the cluster's side for tests/process/test_cluster_faults.py: the standalone
cluster the runner started (JAMMI_CLUSTER_STATE), a Thrift server of the test's own on
it, a fault (a worker or the server SIGKILLed) fired at a measured point of a running
`dbt run`, and what a reader sees afterwards, read through PyHive.

Where a fault fires is measured on a normal run of the same work. A fraction of the
whole run's duration mostly lands outside Spark's jobs (a run of ten seconds spends
about four in them: dbt starts, plans, and sends metadata statements), so a fault that
must hit running tasks fires at a fraction of the time a statement took in the normal
run, counted from when the run under test logs that statement (its dbt.log). The
commit's `alter table ... set location` takes a tenth of a second: a fault at the commit
fires when the run has sent it, or when the run has logged its result.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from dbt.adapters.jammi.mutable_table.table_properties import describe_location
from dbt.adapters.jammi.mutable_table.version_locations import parse_version
from tests.process.harness import DbtProject, DbtResult, ThriftSql, thrift_target
from tests.process.log_points import POLL_S, LogFollower, statement_seconds

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "scripts"))
from spark_cluster import StandaloneCluster  # noqa: E402
from spark_thrift_server import ThriftServer  # noqa: E402

# The driver's log lines for work lost with an executor: a running task, a finished
# map task whose shuffle output went with it.
LOST_WORK = re.compile(r"its executor exited for a reason unrelated|Lost task |Resubmitted ")
WORKER_STARTED = re.compile(r"Starting Spark worker [\d.]+:(\d+) with")
EXECUTOR_ADDED = re.compile(r"Executor added: \S+/(\d+) on worker-\S+-(\d+) ")
TASK_STARTED = re.compile(r"Starting task \S+ in stage \S+ \(TID (\d+)\) \([^,]+, executor (\d+),")
TASK_ENDED = re.compile(
    r"(?:Finished|Lost) task \S+ in stage \S+ \(TID (\d+)\)|\(TID (\d+)\) failed"
)


@dataclass(frozen=True)
class FaultPoint:
    """When a fault fires in a run. Without ``statement``: at ``fraction`` of a normal
    run's duration. With ``statement`` (a regex of a statement in dbt.log): once the run
    has sent it, after ``fraction`` of the time it took in the normal run; with
    ``completed``, as soon as the run has logged its result instead."""

    label: str
    fraction: float = 0.0
    statement: Optional[str] = None
    completed: bool = False


@dataclass
class FaultedRun:
    result: DbtResult
    fired_at: Optional[float]  # seconds after the run started; None: it ended first
    lost_work: int  # tasks and map outputs the driver lost with an executor meanwhile
    victim: Optional[int] = None  # the worker killed, if a worker was


@dataclass
class FaultRig:
    cluster: StandaloneCluster
    server: ThriftServer
    sql: ThriftSql

    def target(self, schema: str) -> dict:
        # dbt-spark sleeps poll_interval before it retries a statement whose connection
        # was lost (5 s by default): a run whose server died fails sooner
        return thrift_target(
            self.server.host, self.server.port, schema, "jammi_fault_test", poll_interval=1
        )

    def full_strength(self) -> None:
        """Every worker alive and the server's executors on all of them (the cores the
        master gave out): a fault then always leaves the run an executor."""
        for index, pid in enumerate(self.cluster.worker_pids):
            if not pid:
                self.cluster.start_worker(index, wait=False)
        self.cluster.wait_alive_workers(self.cluster.workers)
        if not self.cluster.wait_cores_in_use(self.cluster.total_cores, timeout=120):
            raise AssertionError(
                f"the server has executors on {self.cluster.cores_in_use()} of "
                f"{self.cluster.total_cores} cores two minutes after the workers came back"
            )

    def log_size(self) -> int:
        try:
            return self.server.log_path.stat().st_size
        except OSError:
            return 0

    def lost_work_since(self, offset: int) -> int:
        with open(self.server.log_path, "rb") as log:
            log.seek(offset)
            return len(LOST_WORK.findall(log.read().decode(errors="replace")))


def cluster_from_env(state_dir: str) -> Optional[StandaloneCluster]:
    return StandaloneCluster.from_state_dir(Path(state_dir))


def start_server(cluster: StandaloneCluster, state_dir: Path) -> FaultRig:
    server = ThriftServer(state_dir=state_dir, cluster_confs=cluster.application_confs())
    server.start()
    return FaultRig(cluster, server, ThriftSql(server.host, server.port))


class _TaskWatch:
    """Follows the server's log: on which worker each of its executors runs (the
    master's "Executor added ... on worker-...-<port>"; a worker's port from its own
    log), and which workers' executors run a task now."""

    def __init__(self, rig: FaultRig) -> None:
        self.ports: dict[str, int] = {}  # worker port -> worker index
        for index in range(rig.cluster.workers):
            started = WORKER_STARTED.findall(rig.cluster.log_tail(f"worker-{index}", 10_000))
            if started:
                self.ports[started[-1]] = index
        self.path, self.read = rig.server.log_path, 0
        self.on_worker: dict[str, str] = {}  # executor id -> its worker's port
        self.running: dict[str, str] = {}  # task id -> executor id
        self.busy()  # what the log holds so far

    def busy(self) -> set[int]:
        with open(self.path, "rb") as log:
            log.seek(self.read)
            chunk = log.read()
        self.read += len(chunk)
        for line in chunk.decode(errors="replace").splitlines():
            if added := EXECUTOR_ADDED.search(line):
                self.on_worker[added.group(1)] = added.group(2)
            elif task := TASK_STARTED.search(line):
                self.running[task.group(1)] = task.group(2)
            elif ended := TASK_ENDED.search(line):
                self.running.pop(ended.group(1) or ended.group(2), None)
        ports = {self.on_worker.get(executor) for executor in self.running.values()}
        return {self.ports[port] for port in ports if port in self.ports}


def run_with_fault(
    rig: FaultRig,
    project: DbtProject,
    args: list[str],
    tag: str,
    point: FaultPoint,
    normal: DbtResult,
    fault: Optional[Callable[[], None]] = None,
    worker: Optional[int] = None,
) -> FaultedRun:
    """Start `dbt <args>`, fire a fault at ``point`` (timed from ``normal``, a normal run
    of the same work), wait for the run to end. The fault is ``fault``, or with
    ``worker`` a SIGKILL of a worker that runs a task of the run: past its point the
    fault waits until one does, ``worker`` if it does, and takes ``worker`` when the
    statement completes first. ``fired_at`` is None when the run ended before the
    point came."""
    log_offset = rig.log_size()
    tasks = _TaskWatch(rig) if worker is not None else None
    process = project.start(args, tag)
    follower, delay = None, point.fraction * normal.seconds
    if point.statement:
        follower = LogFollower(process.scratch / "logs" / "dbt.log", point.statement)
        took = statement_seconds(normal.log(), point.statement) if point.fraction else 0.0
        assert took is not None, f"the normal run never ran {point.statement!r}"
        delay = point.fraction * took
    fired_at, victim = None, worker
    while process.popen.poll() is None:
        now = time.monotonic()
        if follower:
            follower.poll()
            due = point.completed and follower.completed()
            due = due or (
                not point.completed
                and follower.sent_at is not None
                and now >= follower.sent_at + delay
            )
        else:
            due = now >= process.started + delay
        if due and tasks:
            busy = tasks.busy()
            victim = worker if worker in busy or not busy else min(busy)
            due = bool(busy) or bool(follower and follower.completed())
        if due:
            if victim is not None:
                rig.cluster.kill_worker(victim)
            elif fault:
                fault()
            fired_at = now - process.started
            break
        try:
            process.popen.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            pass
    result = process.wait()
    return FaultedRun(result, fired_at, rig.lost_work_since(log_offset), victim)


# ------------------------------------------------------------ what a reader sees


def mutable_state(sql: ThriftSql, schema: str, table: str) -> dict:
    """The table's rows per batch, its version, and its changelog per offset, in the
    shape test_crash_recovery's hooks print (harness.changelog_problem reads it), plus
    the table versions the events of each offset name."""
    with sql.session() as rows:
        items = rows(
            f"select batch, count(*), count(distinct id) from {schema}.{table} "
            "group by batch order by batch"
        )
        location = describe_location(rows(f"describe table extended {schema}.{table}"))
        backing = rows(f"select backing_table from {schema}.topics where relation_name = '{table}'")
        events = []
        if len(backing) == 1:
            events = rows(
                "select _offset, count(*), min(batch), max(batch), count(distinct _row_idx), "
                "sum(if(change_kind = 'insert', 1, 0)), min(table_version), max(table_version) "
                f"from {schema}.{backing[0][0]} group by _offset order by _offset"
            )
    return {
        "items": [[int(v) for v in row] for row in items],
        "version": parse_version(location or ""),
        "changes": [[int(v) for v in row[:6]] for row in events],
        "changelog_registrations": len(backing),
        "offset_versions": [[int(row[0]), int(row[6]), int(row[7])] for row in events],
    }


def topic_state(sql: ThriftSql, schema: str, view: str, name: str) -> dict:
    """Per offset of the topic: [offset, rows, min batch, max batch, distinct _row_idx,
    min _row_idx, max _row_idx]; and how many registry rows the topic has."""
    with sql.session() as rows:
        events = rows(
            "select _offset, count(*), min(batch), max(batch), count(distinct _row_idx), "
            f"min(_row_idx), max(_row_idx) from {schema}.{view} group by _offset order by _offset"
        )
        registered = rows(f"select count(*) from {schema}.topics where name = '{name}'")
    return {
        "events": [[int(v) for v in row] for row in events],
        "registrations": int(registered[0][0]),
    }
