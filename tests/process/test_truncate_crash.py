"""A truncate across a real crash (docs/mutable_table.md#truncates): a run whose batch is
one ``truncate_when`` row, killed with SIGKILL (dbt and its Spark JVM) at the write
points of a delete with tombstones (the points of test_tombstone_crash.py, found in the
run's own dbt.log), then the late, older change of the truncated keys as the next run,
with new keys newer than the truncate. That run must succeed and:

- when the truncate committed: 0 truncated keys back (its tombstones count), every new
  key inserted;
- when it did not: 0 keys lost (the kill left every key), and the late change applies
  to every key (it is newer than the stored row).

Each kill point truncates the key range the run before it inserted: point ``i``'s range
is inserted at version ``100 i + 1``, its truncate is at ``100 i + 3``, the late change
of the range at ``100 i + 2``, and the next range is inserted at ``100 (i + 1) + 1``,
newer than the truncate (a truncate that ends before its kill is tried again, 10
versions up). parquet,
orc and Delta share one embedded session (as in test_tombstone_crash.py); Iceberg runs
in its own, with one writer at a time.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest
from iceberg_probe import SINGLE_WRITER_CONFS  # scripts/, on the path by tests/conftest.py

from dbt.adapters.jammi.engine.jar_releases import (
    delta_release,
    iceberg_release,
    installed_pyspark_version,
)
from tests.conftest import session_parameters
from tests.process.harness import DbtProject, DbtResult, check, first_line, report, session_target
from tests.process.log_points import KillPoint, kill_on_log
from tests.process.test_tombstone_crash import Expected

KILL_ATTEMPTS = 3  # tries per kill point when the run ends before it
KEYS = 400  # keys of each range: [k * KEYS, (k + 1) * KEYS)


def kill_points(file_format: str) -> tuple[tuple[KillPoint, Expected], ...]:
    """The write points of a run that deletes with tombstones, on ``file_format``."""
    table = f"trunc_{file_format}"
    if file_format in ("parquet", "orc"):  # the rewrite applier's points
        swap = rf"alter table \S+\.{table} set location"
        return (
            (
                KillPoint("after the version write", r"create view \S+__jammi_claim_"),
                Expected(False),
            ),
            (KillPoint("in the swap", swap, fraction=0.5), Expected(None)),
            (KillPoint("after the commit", swap, completed=True), Expected(True)),
        )
    if file_format == "delta":
        merge = rf"merge into \S+\.{table} as t"
        return (
            (
                KillPoint(
                    "before the tombstone append", r"create table if not exists \S+__jammi_tomb"
                ),
                Expected(False, tombstones=False),
            ),
            (KillPoint("between the append and the MERGE commit", merge), Expected(False, True)),
            (KillPoint("after the MERGE commit", merge, completed=True), Expected(True, True)),
        )
    fast_forward = rf"call spark_catalog\.system\.fast_forward\('\S+\.{table}', 'main'"
    return (
        (
            KillPoint(
                "in the branch MERGE", rf"merge into \S+\.{table}\.branch_jammi_run_\w+ as t"
            ),
            Expected(False, tombstones=False),
        ),
        (
            KillPoint("between the tombstone append and the fast-forward", fast_forward),
            Expected(False, True),
        ),
        (KillPoint("after the fast-forward", fast_forward, completed=True), Expected(True, True)),
    )


# var <model>: {'parts': [{'lo', 'hi', 'ver'}], 'truncate': version or none}
TRUNC_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='FILE_FORMAT',
          version_column='ver', truncate_when="op = 't'") }}
{%- set run = var(model.name, {'parts': [], 'truncate': none}) %}
{%- if run.truncate is not none %}
select cast(null as bigint) as id, cast({{ run.truncate }} as bigint) as ver, 't' as op,
  cast(null as string) as label
{%- else %}
{%- for part in run.parts %}
select cast(id as bigint) as id, cast({{ part.ver }} as bigint) as ver, '' as op,
  concat('ver ', {{ part.ver }}, ' row ', id) as label
from range({{ part.lo }}, {{ part.hi }})
{{ 'union all' if not loop.last }}
{%- endfor %}
{%- if not run.parts %}
select cast(1 as bigint) as id, 0L as ver, '' as op, '' as label where false
{%- endif %}
{%- endif %}
"""

# Prints, per table the run writes (var `judged`: the range [lo, hi), its late version):
# the stored keys of the range, those at the late version, the next range's keys, and the
# tombstones of the range in <table>__jammi_tombstones (Delta, Iceberg; none on parquet).
STATE_MACRO = """
{% macro trunc_state(phase) %}
  {%- if execute -%}
    {%- set schema = target.schema -%}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- set state = {'phase': phase, 'tables': {}} -%}
    {%- for name, judged in var('judged', {}).items() -%}
      {%- set in_range = 'id >= ' ~ judged.lo ~ ' and id < ' ~ judged.hi -%}
      {%- set next_range = 'id >= ' ~ judged.hi ~ ' and id < ' ~ (2 * judged.hi - judged.lo) -%}
      {%- set table = {'present': none, 'at_ver': none, 'next': none, 'tombs': none} -%}
      {%- if load_relation(api.Relation.create(schema=schema, identifier=name)) -%}
        {%- set r = run_query('select count_if(' ~ in_range ~ '), count_if(' ~ in_range
                              ~ ' and ver = ' ~ judged.late ~ '), count_if(' ~ next_range
                              ~ ') from ' ~ schema ~ '.' ~ name)[0] -%}
        {%- do table.update({'present': r[0] | int, 'at_ver': r[1] | int, 'next': r[2] | int}) -%}
      {%- endif -%}
      {%- set tombs = api.Relation.create(schema=schema, identifier=name ~ '__jammi_tombstones') -%}
      {%- if load_relation(tombs) -%}
        {%- set t = run_query('select count_if(' ~ in_range ~ ') from ' ~ tombs)[0] -%}
        {%- do table.update({'tombs': t[0] | int}) -%}
      {%- endif -%}
      {%- do state.tables.update({name: table}) -%}
    {%- endfor -%}
    {{- print('JAMMI_STATE ' ~ tojson(state)) -}}
  {%- endif -%}
{% endmacro %}
"""


def version(index: int, attempt: int, step: int) -> int:
    """Point ``index``'s versions: its range inserted at step 1, the late change at 2,
    the truncate at 3; an attempt after an outrun truncate moves all three up by 10."""
    return 100 * index + 10 * attempt + step


def key_range(k: int) -> dict:
    return {"lo": k * KEYS, "hi": (k + 1) * KEYS}


def args(runs: dict[str, dict], judged: Optional[dict] = None) -> list[str]:
    """`dbt run` of the tables in ``runs``, each with its var; ``judged``: the ranges the
    state hooks read."""
    return ["run", "--select", *runs, "--vars", json.dumps({**runs, "judged": judged or {}})]


@dataclass
class TruncateLane:
    """One table's truncates, killed, and what they left."""

    file_format: str
    reference: Optional[DbtResult] = None  # the last run of it that finished
    outcomes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    landed: dict = field(default_factory=lambda: {"old": 0, "new": 0})
    outrun: int = 0  # truncates that ended before their kill point
    attempt: int = 0  # the attempt of the current point that was killed
    unconfirmed: int = 0  # tombstones written by truncates that did not commit

    @property
    def model(self) -> str:
        return f"trunc_{self.file_format}"

    def kill(self, project: DbtProject, index: int, point: KillPoint) -> bool:
        """The truncate of point ``index`` killed at ``point``. A truncate that ends
        before its kill committed: the range is inserted again, newer than it, and the
        next attempt truncates at a newer version. False if every attempt ended first."""
        for attempt in range(KILL_ATTEMPTS):
            self.attempt = attempt
            if attempt:
                refill = {"parts": [{**key_range(index), "ver": version(index, attempt, 1)}]}
                done = project.run(args({self.model: {**refill, "truncate": None}}), "refill")
                check(done, f"{self.model}: the range inserted again after an outrun truncate")
            run = args({self.model: {"parts": [], "truncate": version(index, attempt, 3)}})
            delay = point.delay(self.reference) * 0.8**attempt
            tag = f"{self.model}-kill{index}-{attempt}"
            finished = kill_on_log(project, run, tag, point, delay)
            if finished is None:
                return True
            check(finished, f"{self.model} {point.label}: the truncate that ended first")
            self.outrun += 1
        self.problems.append(f"{point.label}: every truncate ended before the kill")
        return False

    def late_version(self, index: int) -> int:
        return version(index, self.attempt, 2)

    def late_run(self, index: int) -> dict:
        """The late change of the range point ``index`` truncated, and the next range."""
        return {
            "parts": [
                {**key_range(index), "ver": self.late_version(index)},
                {**key_range(index + 1), "ver": version(index + 1, 0, 1)},
            ],
            "truncate": None,
        }

    def judge(self, point: KillPoint, expected: Expected, late: DbtResult) -> None:
        after_kill = late.states()[0]["tables"][self.model]
        after_late = late.states()[-1]["tables"][self.model]
        outcome = {0: "new", KEYS: "old"}.get(after_kill["present"])
        resurrected, lost, label = 0, 0, point.label
        if outcome is None:
            self.problems.append(f"{label}: a partial truncate {after_kill}")
        elif expected.committed is not None and (outcome == "new") != expected.committed:
            self.problems.append(f"{label}: the kill left the {outcome} state {after_kill}")
        if outcome == "new":
            resurrected = after_late["present"]
            if resurrected:
                self.problems.append(f"{label}: {resurrected} truncated keys back {after_late}")
        elif outcome == "old":
            # nothing committed: every key is there, the late change applied to each
            self.unconfirmed += after_kill["tombs"] or 0
            lost = KEYS - after_late["at_ver"]
            if lost:
                self.problems.append(f"{label}: the late change left {after_late}")
        if after_late["next"] != KEYS:
            self.problems.append(f"{label}: {after_late['next']} of the next range's keys")
        written = after_kill["tombs"] or 0
        if expected.tombstones is not None and written != KEYS * expected.tombstones:
            self.problems.append(f"{label}: {written} tombstones written at the kill")
        if outcome:
            self.landed[outcome] += 1
        self.outcomes.append(
            f"{label}: old={int(outcome == 'old')} new={int(outcome == 'new')} "
            f"resurrected={resurrected} lost={lost}"
        )

    def report(self) -> None:
        if self.file_format in ("delta", "iceberg") and not self.unconfirmed:
            self.problems.append("no kill left tombstones without their commit")
        report(
            f"truncate crash ({self.file_format}): "
            + "; ".join(self.outcomes)
            + f" | kills before the commit {self.landed['old']}, after it {self.landed['new']}; "
            + f"{self.unconfirmed} tombstones written without their commit, none counted; "
            * bool(self.unconfirmed)
            + f"{self.outrun} run(s) outran their kill"
        )


def trunc_project(root: Path, formats: tuple[str, ...]) -> DbtProject:
    target = session_target("trunc", root / "spark")
    if "delta" in formats:
        target["server_side_parameters"].update(session_parameters("delta"))
    if "iceberg" in formats:  # one writer at a time: no Hive table lock needed
        target["server_side_parameters"].update(
            {**session_parameters("iceberg"), **SINGLE_WRITER_CONFS}
        )
    return DbtProject(
        root=root / "project",
        target=target,
        models={f"trunc_{f}.sql": TRUNC_SQL.replace("FILE_FORMAT", f) for f in formats},
        macros={"trunc_state.sql": STATE_MACRO},
        project_config={
            "on-run-start": ["{{ trunc_state('before') }}"],
            "on-run-end": ["{{ trunc_state('after') }}"],
        },
    ).write()


def truncate_at_every_point(project: DbtProject, lanes: list[TruncateLane]) -> None:
    base = project.run(
        args(
            {
                lane.model: {"parts": [{**key_range(0), "ver": version(0, 0, 1)}], "truncate": None}
                for lane in lanes
            }
        ),
        "base",
    )
    check(base, "base run")
    for index in range(3):
        killed = [
            lane
            for lane in lanes
            if lane.kill(project, index, kill_points(lane.file_format)[index][0])
        ]
        judged = {
            lane.model: {**key_range(index), "late": lane.late_version(index)} for lane in lanes
        }
        late = project.run(
            args({lane.model: lane.late_run(index) for lane in lanes}, judged), f"late{index}"
        )
        check(late, f"the run after the truncates killed at point {index}")
        for lane in lanes:
            lane.reference = late
            if lane in killed:
                lane.judge(*kill_points(lane.file_format)[index], late)
    for lane in lanes:
        lane.report()
    problems = [f"{lane.file_format} {p}" for lane in lanes for p in lane.problems]
    assert problems == [], "\n".join(first_line(p, 600) for p in problems)


def test_sigkill_during_a_truncate_resurrects_and_loses_no_key(tmp_path: Path) -> None:
    formats: tuple[str, ...] = ("parquet", "orc", "delta")
    if delta_release(installed_pyspark_version()) is None and not os.environ.get(
        "JAMMI_DELTA_JARS"
    ):
        if os.environ.get("JAMMI_DELTA_REQUIRED") == "1":
            pytest.fail("Delta Lake is required (JAMMI_DELTA_REQUIRED=1)")
        formats = ("parquet", "orc")
    project = trunc_project(tmp_path / "-".join(formats), formats)
    truncate_at_every_point(project, [TruncateLane(f) for f in formats])
    if "delta" not in formats:
        pytest.skip(
            f"parquet and orc passed; no Delta Lake release for {installed_pyspark_version()}"
        )


def test_sigkill_during_an_iceberg_truncate_resurrects_and_loses_no_key(tmp_path: Path) -> None:
    spark = installed_pyspark_version()
    if iceberg_release(spark) is None and not os.environ.get("JAMMI_ICEBERG_JARS"):
        if os.environ.get("JAMMI_ICEBERG_REQUIRED") == "1":
            pytest.fail(f"Iceberg is required (JAMMI_ICEBERG_REQUIRED=1): none for {spark}")
        pytest.skip(f"no Iceberg runtime for PySpark {spark}")
    project = trunc_project(tmp_path / "iceberg", ("iceberg",))
    truncate_at_every_point(project, [TruncateLane("iceberg")])
