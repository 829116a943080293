"""The live tail against a Spark Thrift Server: `python -m dbt.adapters.jammi.topic.tail`
follows a topic while separate `dbt run` processes publish to it, and prints exactly the
events it should -- each once, in offset order, filtered by --where, in its tenant's
scope (a bound tail never prints another tenant's events).

Runs in the thrift lane (`make thrift-lane`); skipped elsewhere (an embedded session's
Derby metastore admits one process, so a tail and a run cannot share it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.process.harness import THRIFT_ONLY, DbtProject, thrift_project

pytestmark = THRIFT_ONLY

FORMAT = os.environ.get("JAMMI_TEST_FILE_FORMAT", "parquet")
TAIL_TIMEOUT_S = 300

# each publish: four events, two of kind 'b'; `batch` tells the publishes apart
EVENTS_SQL = """
{{ config(materialized='topic', topic_name='tail.events', file_format='FORMAT') }}
select id, kind, {{ var('batch', 0) }} as batch
from values (1, 'a'), (2, 'b'), (3, 'a'), (4, 'b') as t(id, kind)
"""


@pytest.fixture(scope="module")
def tail_project(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("tail_project")
    models = {"tail_events.sql": EVENTS_SQL.replace("FORMAT", FORMAT)}
    with thrift_project(root, "tail", models, user="jammi_tail_test") as (project, _, _):
        yield project


def publish(project: DbtProject, batch: int, tenant: str | None = None):
    variables: dict = {"batch": batch}
    if tenant:
        variables["jammi_tenant"] = tenant
    return project.start(["run", "--vars", json.dumps(variables)], tag=f"publish_{batch}")


def test_tail_prints_what_concurrent_runs_publish(tail_project: DbtProject):
    project = tail_project
    first = publish(project, 1).wait()
    assert first.returncode == 0, first.output[-2000:]

    # bound to acme, from offset 2 on (so the start-up race cannot hide a publish),
    # kind 'b' only; it exits after the 4 events it must print
    tail = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dbt.adapters.jammi.topic.tail",
            "tail.events",
            "--where",
            "kind = 'b'",
            "--from-offset",
            "2",
            "--project-dir",
            str(project.root),
            "--profiles-dir",
            str(project.root),
            "--vars",
            json.dumps({"jammi_tenant": "acme"}),
            "--poll-seconds",
            "0.5",
            "--max-events",
            "4",
        ],
        cwd=project.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # offset 2: globex's (hidden from acme), 3: shared, 4: acme's own
        for batch, tenant in ((2, "globex"), (3, None), (4, "acme")):
            assert tail.poll() is None, "the tail stopped before the publishes"
            result = publish(project, batch, tenant).wait()
            assert result.returncode == 0, result.output[-2000:]
        out, err = tail.communicate(timeout=TAIL_TIMEOUT_S)
    finally:
        if tail.poll() is None:
            tail.kill()
    assert tail.returncode == 0, err[-2000:]
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    seen = [(e["_offset"], e["batch"], e["id"], e["kind"], e["tenant_id"]) for e in events]
    assert seen == [
        (3, 3, 2, "b", None),
        (3, 3, 4, "b", None),
        (4, 4, 2, "b", "acme"),
        (4, 4, 4, "b", "acme"),
    ]


def test_tail_rejects_bad_input_before_reading(tmp_path: Path):
    # run where there is no dbt project or profile: a tail that reached dbt would fail
    # on that ("Path ... does not exist") instead of naming the input and its fix
    for args, fragment in (
        (["Not A Topic"], "topic_name 'Not A Topic' is not allowed"),
        (["tail.events", "--where", "1 = 1; drop table x"], "--where"),
    ):
        run = subprocess.run(
            [sys.executable, "-m", "dbt.adapters.jammi.topic.tail", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 2 and fragment in run.stderr, run.stderr
        assert "Fix:" in run.stderr and "does not exist" not in run.stderr, run.stderr
