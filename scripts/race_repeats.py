"""`make race-repeats`: every race test RACES times and every fault test FAULTS times on
the installed Spark line, each repetition its own pytest process, over the servers the
lanes start (a standalone cluster with a Thrift server, an Iceberg Thrift server, a REST
catalog server, a Connect server). At the end one table sums, per scenario, the counts
its summary lines report over the repetitions (successes, clean failures, re-plans, lost
updates, changelog problems, old/new/mixed states); docs/testing.md, "Races, repeated".

Usage:
  python scripts/race_repeats.py [--races 10] [--faults 5] [--only thrift,iceberg,...]
  python scripts/race_repeats.py repeat --times N --label L -- TEST ...   # one step
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/
from connect_server import CONNECT_RACE_TESTS, CONNECT_REST_RACE_TESTS  # noqa: E402
from iceberg_rest_catalog import (  # noqa: E402
    URI_VARIABLE,
    create_namespace,
    rest_catalog_confs,
    serving,
)
from spark_cluster import running_cluster  # noqa: E402
from spark_thrift_server import (  # noqa: E402
    REPO_ROOT,
    pyspark_home,
    running_thrift_server,
    server_env,
    server_format_jars,
)
from thrift_lane import FORMAT_LANE_TESTS  # noqa: E402

# The race tests of each server (the lanes' own lists, without their feature tests).
THRIFT_RACES = [
    "tests/process/test_thrift_races.py",
    "tests/process/test_identity_races.py",
    "tests/process/test_rollback_race.py",
]
DELTA_THRIFT_RACES = [t for t in FORMAT_LANE_TESTS["delta"] if t.startswith("tests/process/")]
ICEBERG_THRIFT_RACES = list(FORMAT_LANE_TESTS["iceberg"])
# Embedded sessions racing: two JVMs on one REST catalog; two sessions claiming offsets
# and registering one topic.
REST_CATALOG_RACES = ["tests/process/test_rest_catalog_races.py"]
EMBEDDED_RACES = [
    "tests/functional/topic/test_topic_concurrency.py",
    "tests/functional/topic/test_topic_registration_race.py",
]
CLUSTER_FAULTS = ["tests/process/test_cluster_faults.py"]
CRASH_TESTS = [
    "tests/process/test_crash_recovery.py",
    "tests/process/test_tombstone_crash.py",
    "tests/process/test_iceberg_identity_crash.py",
]
OUT_VARIABLE = "JAMMI_REPEATS_OUT"  # where each step appends its tally (JSON lines)
_FIELD = re.compile(r"(?:^|[\s(;,|])([a-z][a-z\- ]*?)=(\d+)")
_OUTCOME = re.compile(r"(\d+) (passed|failed|error|errors|skipped)")


def summary_counts(line: str) -> tuple[str, Counter]:
    """A process test's summary line (tests/process/harness.report) as its scenario (the
    text before the first ':') and its numeric ``key=value`` fields."""
    scenario, _, rest = line.partition(":")
    return scenario.strip(), Counter({k.strip(): int(v) for k, v in _FIELD.findall(rest)})


def pytest_outcomes(output: str) -> Counter:
    """The counts of pytest's last line (``2 passed, 1 failed in 80.1s``)."""
    lines = reversed(output.splitlines())
    last = next((ln for ln in lines if " in " in ln and _OUTCOME.search(ln)), "")
    return Counter({kind.rstrip("s"): int(n) for n, kind in _OUTCOME.findall(last)})


def summary_lines(output: str) -> list[str]:
    """The lines of pytest's "process test summary" section (tests/process/conftest.py)."""
    _, found, section = output.partition("process test summary")
    if not found:
        return []
    lines = section.split("\n\n")[0].splitlines()[1:]  # up to the next blank line
    return [ln for ln in lines if _FIELD.search(ln.partition(":")[2])]


def repeat(label: str, tests: list[str], times: int, env: Optional[dict] = None) -> int:
    """``tests`` ``times`` times, each in its own pytest process with ``env``; appends one
    JSON line per repetition to $JAMMI_REPEATS_OUT; the worst exit code."""
    worst = 0
    for n in range(1, times + 1):
        command = [sys.executable, "-m", "pytest", *tests, "-q", "-rs", "-p", "no:cacheprovider"]
        print(f"\nrepeats: {label} {n}/{times}: {' '.join(command[3:])}", flush=True)
        started = time.monotonic()
        done = subprocess.run(
            command, cwd=REPO_ROOT, env=env or dict(os.environ), capture_output=True, text=True
        )
        print(done.stdout[-6000:] + done.stderr[-2000:], flush=True)
        record = {
            "label": label,
            "repetition": n,
            "exit": done.returncode,
            "seconds": round(time.monotonic() - started),
            "outcomes": pytest_outcomes(done.stdout),
            "summary": summary_lines(done.stdout),
        }
        out = os.environ.get(OUT_VARIABLE)
        if out:
            with open(out, "a") as f:
                f.write(json.dumps(record) + "\n")
        worst = max(worst, done.returncode)
    return worst


def thrift_env(server, fmt: str, cluster=None) -> dict:
    env = dict(server_env(server), JAMMI_TEST_METHOD="thrift", JAMMI_TEST_FILE_FORMAT=fmt)
    env["JAMMI_THRIFT_CLUSTER"] = "1" if server.cluster_confs else "0"
    if cluster is not None:
        env["JAMMI_CLUSTER_STATE"] = str(cluster.state_dir)
    return env


def on_cluster(races: int, faults: int) -> int:
    """One standalone cluster: the parquet and Delta Thrift servers' races, then the
    cluster faults (their own servers on it), as `make cluster-lanes` runs them."""
    codes = []
    cluster_dir = Path(tempfile.mkdtemp(prefix="jammi-cluster-"))
    try:
        with running_cluster(cluster_dir, pyspark_home()) as cluster:
            with running_thrift_server(cluster=cluster) as server:
                env = thrift_env(server, "parquet")
                codes.append(repeat("thrift parquet", THRIFT_RACES, races, env))
            with running_thrift_server(
                table_format="delta", format_jars=server_format_jars("delta"), cluster=cluster
            ) as server:
                env = thrift_env(server, "delta")
                codes.append(repeat("thrift delta", DELTA_THRIFT_RACES, races, env))
            env = dict(
                os.environ,
                JAMMI_CLUSTER_STATE=str(cluster.state_dir),
                JAMMI_CLAIM_LEASE_SECONDS="40",
            )
            codes.append(repeat("cluster faults", CLUSTER_FAULTS, faults, env))
    finally:
        shutil.rmtree(cluster_dir, ignore_errors=True)
    return max(codes)


def on_iceberg_thrift(races: int, faults: int) -> int:
    """An Iceberg Thrift server (local mode) on the Hive catalog, then one whose default
    catalog is a REST catalog server, as `make thrift-iceberg-lane` runs them."""
    jars = server_format_jars("iceberg")
    codes = []
    with running_thrift_server(table_format="iceberg", format_jars=jars) as server:
        env = thrift_env(server, "iceberg")
        codes.append(repeat("thrift iceberg", ICEBERG_THRIFT_RACES, races, env))
    rest_dir = Path(tempfile.mkdtemp(prefix="jammi-rest-"))
    try:
        with serving(rest_dir) as uri:
            create_namespace(uri, "default")
            os.environ[URI_VARIABLE] = uri
            with running_thrift_server(
                table_format="iceberg", format_jars=jars, catalog_confs=rest_catalog_confs(uri)
            ) as server:
                env = thrift_env(server, "iceberg")
                codes.append(repeat("thrift iceberg rest", ICEBERG_THRIFT_RACES, races, env))
    finally:
        shutil.rmtree(rest_dir, ignore_errors=True)
    return max(codes)


def inner(label: str, tests: list[str], times: int, *wrapper: str) -> list[str]:
    """This script's `repeat` step, run by ``wrapper`` (a server's `run --` command)."""
    me = [sys.executable, str(Path(__file__).resolve()), "repeat", "--times", str(times)]
    return [*wrapper, *me, "--label", label, "--", *tests]


def on_connect(races: int, faults: int) -> int:
    """A Connect server (local mode), then one on a REST catalog (`make connect-lane`)."""
    script = [sys.executable, str(REPO_ROOT / "scripts" / "connect_server.py"), "run"]
    plain = inner("connect parquet", list(CONNECT_RACE_TESTS), races, *script, "--")
    rest = [*script, "--iceberg-rest", "--"]
    rest = inner("connect iceberg rest", list(CONNECT_REST_RACE_TESTS), races, *rest)
    env = dict(os.environ, JAMMI_TEST_FILE_FORMAT="iceberg")
    return max(subprocess.call(plain, cwd=REPO_ROOT), subprocess.call(rest, cwd=REPO_ROOT, env=env))


def on_embedded(races: int, faults: int) -> int:
    """Embedded sessions: the topic claim and registration races on parquet, the REST
    catalog's two JVMs on Iceberg, and the crash lane's kills (method: session)."""
    iceberg = dict(os.environ, JAMMI_TEST_FILE_FORMAT="iceberg")
    rest = [sys.executable, str(REPO_ROOT / "scripts" / "iceberg_rest_catalog.py"), "run", "--"]
    codes = [
        repeat("embedded parquet", EMBEDDED_RACES, races),
        subprocess.call(inner("rest catalog", REST_CATALOG_RACES, races, *rest), env=iceberg),
        repeat("crash", CRASH_TESTS, faults),
    ]
    return max(codes)


GROUPS: dict[str, Callable[[int, int], int]] = {
    "cluster": on_cluster,
    "iceberg": on_iceberg_thrift,
    "connect": on_connect,
    "embedded": on_embedded,
}


def tally(path: Path) -> str:
    """The repetitions' table: per step and scenario, the runs and the summed counts."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    lines = ["| step | repetitions | passed / failed | minutes | scenario | summed counts |"]
    lines.append("|---|---:|---|---:|---|---|")
    for label in dict.fromkeys(r["label"] for r in records):
        mine = [r for r in records if r["label"] == label]
        outcomes = sum((Counter(r["outcomes"]) for r in mine), Counter())
        minutes = sum(r["seconds"] for r in mine) / 60
        scenarios: dict[str, Counter] = {}
        for line in (ln for r in mine for ln in r["summary"]):
            name, counts = summary_counts(line)
            if not counts:  # a scenario's own remark, or pytest's lines after the section
                continue
            scenarios.setdefault(name, Counter()).update(counts)  # zeros kept
        passed, failed = outcomes["passed"], outcomes["failed"]
        head = f"| {label} | {len(mine)} | {passed} / {failed} | {minutes:.1f}"
        for name, counts in scenarios.items() or {"": Counter()}.items():
            fields = " ".join(f"{k}={v}" for k, v in counts.items())
            lines.append(f"{head} | {name} | {fields} |")
            head = "| | | | "
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=10)
    parser.add_argument("--faults", type=int, default=5)
    parser.add_argument("--only", default=",".join(GROUPS), help=f"of {', '.join(GROUPS)}")
    parser.add_argument("--out", type=Path, help="the JSON lines file (default: a temporary one)")
    sub = parser.add_subparsers(dest="command")
    step = sub.add_parser("repeat", help="one step: TEST ... --times times")
    step.add_argument("--times", type=int, required=True)
    step.add_argument("--label", required=True)
    step.add_argument("tests", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "repeat":
        tests = args.tests[1:] if args.tests[:1] == ["--"] else args.tests
        return repeat(args.label, tests, args.times)
    unknown = set(args.only.split(",")) - set(GROUPS)
    if unknown:
        parser.error(f"--only takes {', '.join(GROUPS)}, not {', '.join(sorted(unknown))}")
    out = args.out or Path(tempfile.mkstemp(prefix="jammi-repeats-", suffix=".jsonl")[1])
    os.environ[OUT_VARIABLE] = str(out)
    started = time.monotonic()
    codes = [GROUPS[name](args.races, args.faults) for name in args.only.split(",")]
    print(f"\nrace repeats ({(time.monotonic() - started) / 60:.1f} min; records {out}):")
    print(tally(out))
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
