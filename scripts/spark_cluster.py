"""A Spark standalone cluster on loopback, from the jars the installed PySpark ships.

One master and N workers (`spark-class org.apache.spark.deploy.master.Master` /
`...worker.Worker`), each its own JVM in its own process group; every application the
cluster runs gets executors that are JVMs of their own, launched by the workers. So a
Thrift server pointed at `cluster.url` runs the way a Spark cluster runs for users who
outgrew one machine: the driver (the Thrift server) and the executors share no memory,
tasks and their results cross process boundaries, and a worker can die under a job.

Nothing is downloaded; the state (worker directories, logs) stays under `state_dir`.
The fault tests (tests/process/test_cluster_faults.py) kill a worker with SIGKILL and
start it again: `kill_worker(i)` / `start_worker(i)`; the cluster's description is
written to `cluster.json` in the state directory so a test process can find it
(`StandaloneCluster.from_state_dir`, JAMMI_CLUSTER_STATE).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
STARTUP_TIMEOUT_S = float(os.environ.get("JAMMI_CLUSTER_STARTUP_TIMEOUT", "180"))
WORKER_CORES = int(os.environ.get("JAMMI_CLUSTER_WORKER_CORES", "1"))
WORKER_MEMORY = os.environ.get("JAMMI_CLUSTER_WORKER_MEMORY", "1500m")
EXECUTOR_MEMORY = os.environ.get("JAMMI_CLUSTER_EXECUTOR_MEMORY", "1g")


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports: every socket stays bound until all are chosen (one
    after the other, the kernel can hand out the port it just freed again, and a master
    whose RPC and web UI ports are equal never answers its status page)."""
    with contextlib.ExitStack() as stack:
        socks = [
            stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            for _ in range(count)
        ]
        for sock in socks:
            sock.bind((HOST, 0))
        return [int(sock.getsockname()[1]) for sock in socks]


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still runs. A member that has exited but
    was not reaped yet (a zombie) does not count: a worker restarted by a test process
    is that process's child, and after a SIGKILL from any other process it stays a
    zombie until its parent exits (``killpg(pgid, 0)`` alone would call it alive)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    states = _group_states(pgid)
    return states is None or any(state != "Z" for state in states)


def _group_states(pgid: int) -> Optional[list[str]]:
    """The states (``R``, ``S``, ``Z``, ...) of the processes of group ``pgid`` from
    /proc; None where there is no /proc (macOS), where only ``killpg`` can tell."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    states = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # exited meanwhile
        if len(fields) > 2 and fields[2] == str(pgid):
            states.append(fields[0])
    return states


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def kill_group(pgid: int, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
    """Signal a process group, then SIGKILL whatever is left after ``timeout``."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and group_alive(pgid):
        _reap(pgid)
        time.sleep(0.2)
    if group_alive(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        while group_alive(pgid):
            _reap(pgid)
            time.sleep(0.2)
    _reap(pgid)


@dataclass
class StandaloneCluster:
    """A master and ``workers`` workers of ``WORKER_CORES`` cores each on loopback."""

    state_dir: Path
    spark_home: Path
    workers: int = 2
    master_port: int = 0
    master_ui_port: int = 0
    master_pid: int = 0
    worker_pids: list[int] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://{HOST}:{self.master_port}"

    @property
    def total_cores(self) -> int:
        return self.workers * WORKER_CORES

    @property
    def info_path(self) -> Path:
        return self.state_dir / "cluster.json"

    def application_confs(self) -> dict[str, str]:
        """What a driver (the Thrift server) sets to run on this cluster: every core,
        one executor per worker, and no job before every executor has registered."""
        return {
            "spark.master": self.url,
            "spark.cores.max": str(self.total_cores),
            "spark.executor.cores": str(WORKER_CORES),
            "spark.executor.memory": EXECUTOR_MEMORY,
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
        }

    # ------------------------------------------------------------ processes

    def _env(self) -> dict[str, str]:
        env = dict(os.environ, SPARK_HOME=str(self.spark_home), SPARK_LOCAL_IP=HOST)
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        env["SPARK_NO_DAEMONIZE"] = "1"
        return env

    def _spawn(self, name: str, args: list[str]) -> int:
        log = self.state_dir / f"{name}.log"
        with open(log, "ab") as sink:
            process = subprocess.Popen(
                [str(self.spark_home / "bin" / "spark-class"), *args],
                cwd=self.state_dir,
                env=self._env(),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: a worker and its executors
            )
        return process.pid

    def start(self) -> StandaloneCluster:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.master_port, self.master_ui_port = free_ports(2)
        self.master_pid = self._spawn(
            "master",
            [
                MASTER_CLASS,
                "--host",
                HOST,
                "--port",
                str(self.master_port),
                "--webui-port",
                str(self.master_ui_port),
            ],
        )
        self.worker_pids = [0] * self.workers
        for index in range(self.workers):
            self.start_worker(index, wait=False)
        self.wait_alive_workers(self.workers)
        return self

    def start_worker(self, index: int, wait: bool = True) -> None:
        """Start worker ``index`` (again, after kill_worker); with ``wait``, until the
        master counts every worker alive."""
        work_dir = self.state_dir / f"worker-{index}"
        work_dir.mkdir(parents=True, exist_ok=True)
        self.worker_pids[index] = self._spawn(
            f"worker-{index}",
            [
                WORKER_CLASS,
                self.url,
                "--host",
                HOST,
                "--cores",
                str(WORKER_CORES),
                "--memory",
                WORKER_MEMORY,
                "--work-dir",
                str(work_dir),
                "--webui-port",
                str(free_port()),
            ],
        )
        self._write_info()
        if wait:
            self.wait_alive_workers(self.workers)

    def kill_worker(self, index: int) -> None:
        """SIGKILL worker ``index`` and the executors it launched (its process group):
        a machine of the cluster lost at once."""
        kill_group(self.worker_pids[index], signal.SIGKILL, timeout=0)
        self.worker_pids[index] = 0
        self._write_info()

    def _status(self) -> dict:
        """The master's view (its web UI's /json/), empty when it does not answer."""
        try:
            with urllib.request.urlopen(
                f"http://{HOST}:{self.master_ui_port}/json/", timeout=5
            ) as answer:
                return dict(json.loads(answer.read()))
        except (OSError, ValueError):
            return {}

    def alive_workers(self) -> int:
        workers = self._status().get("workers", [])
        return sum(1 for w in workers if w.get("state") == "ALIVE")

    def cores_in_use(self) -> int:
        """Cores of alive workers that run executors of an application."""
        workers = self._status().get("workers", [])
        return sum(int(w.get("coresused", 0)) for w in workers if w.get("state") == "ALIVE")

    def wait_cores_in_use(self, count: int, timeout: float = STARTUP_TIMEOUT_S) -> bool:
        """Wait until the master has given ``count`` cores to executors (after a worker
        came back: the running application's executor on it); False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.cores_in_use() >= count:
                return True
            time.sleep(0.5)
        return False

    def wait_alive_workers(self, count: int, timeout: float = STARTUP_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not group_alive(self.master_pid):
                self.stop()
                raise SystemExit(f"Spark master exited; log:\n{self.log_tail('master')}")
            if self.alive_workers() >= count:
                return
            time.sleep(1)
        self.stop()
        raise SystemExit(
            f"the standalone cluster did not count {count} alive workers within "
            f"{timeout:.0f}s; master log:\n{self.log_tail('master')}"
        )

    def log_tail(self, name: str, lines: int = 30) -> str:
        try:
            text = (self.state_dir / f"{name}.log").read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(text[-lines:])

    def stop(self) -> None:
        """Workers (and their executors) first, then the master. Workers that another
        process (a fault test) started again are stopped too: their process groups are
        in ``cluster.json``."""
        for pid in {*self.worker_pids, *self._recorded_worker_pids()}:
            if pid:
                kill_group(pid)
        if self.master_pid:
            kill_group(self.master_pid)
        self.worker_pids = [0] * self.workers
        self.master_pid = 0
        with contextlib.suppress(FileNotFoundError):
            self.info_path.unlink()

    # ------------------------------------------------------------ described on disk

    def _recorded_worker_pids(self) -> list[int]:
        try:
            return [int(pid) for pid in json.loads(self.info_path.read_text())["worker_pids"]]
        except (OSError, ValueError, KeyError, TypeError):
            return []

    def _write_info(self) -> None:
        self.info_path.write_text(
            json.dumps(
                {
                    "spark_home": str(self.spark_home),
                    "workers": self.workers,
                    "master_port": self.master_port,
                    "master_ui_port": self.master_ui_port,
                    "master_pid": self.master_pid,
                    "worker_pids": self.worker_pids,
                }
            )
        )

    @classmethod
    def from_state_dir(cls, state_dir: Path) -> Optional[StandaloneCluster]:
        try:
            info = json.loads((Path(state_dir) / "cluster.json").read_text())
        except FileNotFoundError:
            return None
        return cls(
            state_dir=Path(state_dir),
            spark_home=Path(info["spark_home"]),
            workers=info["workers"],
            master_port=info["master_port"],
            master_ui_port=info["master_ui_port"],
            master_pid=info["master_pid"],
            worker_pids=list(info["worker_pids"]),
        )


@contextlib.contextmanager
def running_cluster(state_dir: Path, spark_home: Path, workers: int = 2):
    cluster = StandaloneCluster(state_dir=state_dir, spark_home=spark_home, workers=workers)
    try:
        yield cluster.start()
    finally:
        cluster.stop()
