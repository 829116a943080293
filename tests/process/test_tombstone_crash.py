"""Deletes stay deleted across a real crash: a delete run of a mutable table with a
version rule, killed with SIGKILL (dbt and its Spark JVM) at named phases of the run
found in its own dbt.log (log_points.py), then the late, older change of the same keys
as the next run. That run must succeed (it recovers from whatever the kill left) and:

- when the delete committed, its tombstones count: 0 keys are back (resurrected);
- when it did not, nothing was deleted and no tombstone of it counts: the late change
  applies to every key (it is newer than the stored row).

parquet: the tombstones are written into the version directory before the commit, and
the version's `alter table ... set location` commits rows and tombstones together. The
kills land after the version write (before the claim), in the swap (half-way through
the time the previous run's swap took) and after it.

Delta: the tombstones go to `<table>__jammi_tombstones` before the MERGE, tagged with
the invocation id, and count only once the table's history holds that invocation's
commit. The kills land before the tombstone append, between the append and the MERGE
commit (the tombstones are written; the test asserts they are there and do not count)
and after the commit. Delta is loaded from Maven coordinates as the Delta lane does
(`make jars` fills the local repository); when it cannot load, the Delta case is
skipped, or fails with JAMMI_DELTA_REQUIRED=1.

The state is read by the dbt processes themselves (on-run-start/-end hooks), as in
test_crash_recovery.py: the embedded Derby metastore admits one process at a time.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from dbt.adapters.jammi.engine.jar_releases import delta_release, installed_pyspark_version
from tests.conftest import delta_session_parameters
from tests.process.harness import DbtProject, DbtResult, check, first_line, report, session_target
from tests.process.log_points import KillPoint, kill_on_log

KILL_ATTEMPTS = 3  # tries per kill point when the run ends before it
BASE_ROWS = 4_000
DELETED = 400  # keys each delete run deletes: [k * DELETED, (k + 1) * DELETED)
ITEMS = "tomb_items"

SWAP = r"alter table \S+\.tomb_items set location"
MERGE = r"merge into \S+\.tomb_items as t"


@dataclass(frozen=True)
class Expected:
    """What a kill at a point must leave: ``committed`` (None: either side -- a kill in
    the swap lands before or after the metastore's update) and, on Delta, whether the
    killed run's tombstones are written."""

    committed: Optional[bool]
    tombstones: Optional[bool] = None


KILL_POINTS: dict[str, tuple[tuple[KillPoint, Expected], ...]] = {
    "parquet": (
        (KillPoint("after the version write", r"create view \S+__jammi_claim_"), Expected(False)),
        (KillPoint("in the swap", SWAP, fraction=0.5), Expected(None)),
        (KillPoint("after the commit", SWAP, completed=True), Expected(True)),
    ),
    "delta": (
        (
            KillPoint("before the tombstone append", r"create table if not exists \S+__jammi_tomb"),
            Expected(False, tombstones=False),
        ),
        (
            KillPoint("between the append and the MERGE commit", MERGE),
            Expected(False, tombstones=True),
        ),
        (KillPoint("after the MERGE commit", MERGE, completed=True), Expected(True, True)),
    ),
}

ITEMS_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='FILE_FORMAT',
          version_column='ver', delete_when="op = 'd'") }}
select cast(id as bigint) as id, cast({{ var('ver') }} as bigint) as ver,
  '{{ var('op') }}' as op, concat('ver ', {{ var('ver') }}, ' row ', id) as label
from range({{ var('lo') }}, {{ var('hi') }})
"""

# Prints, for the run's range [lo, hi): the stored keys, those at the run's version, the
# Delta tombstones (committed or not; none on parquet), and the table's row count.
STATE_MACRO = """
{% macro tomb_state(phase) %}
  {%- if execute -%}
    {%- set schema = target.schema -%}
    {%- set in_range = 'id >= ' ~ var('lo') ~ ' and id < ' ~ var('hi') -%}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- set state = {'phase': phase, 'present': none, 'at_ver': none, 'total': none,
                     'tombs': none} -%}
    {%- if load_relation(api.Relation.create(schema=schema, identifier='tomb_items')) -%}
      {%- set r = run_query('select count_if(' ~ in_range ~ '), count_if(' ~ in_range
                            ~ ' and ver = ' ~ var('ver') ~ '), count(*) from '
                            ~ schema ~ '.tomb_items')[0] -%}
      {%- do state.update({'present': r[0] | int, 'at_ver': r[1] | int, 'total': r[2] | int}) -%}
    {%- endif -%}
    {%- set tombs = api.Relation.create(schema=schema,
                                        identifier='tomb_items__jammi_tombstones') -%}
    {%- if load_relation(tombs) -%}
      {%- set t = run_query('select count_if(' ~ in_range ~ ') from ' ~ tombs)[0] -%}
      {%- do state.update({'tombs': t[0] | int}) -%}
    {%- endif -%}
    {{- print('JAMMI_STATE ' ~ tojson(state)) -}}
  {%- endif -%}
{% endmacro %}
"""

# What a session that could not load Delta Lake prints (jars missing or unresolvable).
DELTA_MISSING = re.compile(
    r"unresolved dependency|ClassNotFoundException: \S*delta|DeltaSparkSessionExtension"
    r"|DeltaCatalog|io\.delta\S* not found",
    re.IGNORECASE,
)


def args(lo: int, hi: int, ver: int, op: str = "") -> list[str]:
    return [
        "run",
        "--select",
        ITEMS,
        "--vars",
        json.dumps({"lo": lo, "hi": hi, "ver": ver, "op": op}),
    ]


def key_range(k: int) -> tuple[int, int]:
    return k * DELETED, (k + 1) * DELETED


def delta_unavailable(reason: str) -> None:
    """Skip the Delta case, or fail it where Delta is required (CI)."""
    if os.environ.get("JAMMI_DELTA_REQUIRED") == "1":
        pytest.fail(f"Delta Lake is required (JAMMI_DELTA_REQUIRED=1): {reason}")
    pytest.skip(reason)


def tomb_project(tmp_path: Path, file_format: str) -> DbtProject:
    target = session_target("tomb", tmp_path / "spark")
    if file_format == "delta":
        if delta_release(installed_pyspark_version()) is None and not os.environ.get(
            "JAMMI_DELTA_JARS"
        ):
            delta_unavailable(f"no Delta Lake release for PySpark {installed_pyspark_version()}")
        target["server_side_parameters"].update(delta_session_parameters())
    return DbtProject(
        root=tmp_path / "project",
        target=target,
        models={f"{ITEMS}.sql": ITEMS_SQL.replace("FILE_FORMAT", file_format)},
        macros={"tomb_state.sql": STATE_MACRO},
        project_config={
            "on-run-start": ["{{ tomb_state('before') }}"],
            "on-run-end": ["{{ tomb_state('after') }}"],
        },
    ).write()


def base_run(project: DbtProject, file_format: str) -> DbtResult:
    base = project.run(args(0, BASE_ROWS, 1), "base")
    missing = [ln for ln in base.output.splitlines() if DELTA_MISSING.search(ln)]
    if file_format == "delta" and base.returncode != 0 and missing:
        delta_unavailable(f"Delta Lake did not load: {missing[0].strip()[:300]}")
    check(base, "base run")
    assert base.states()[-1]["present"] == BASE_ROWS, base.states()
    return base


@pytest.mark.parametrize("file_format", ["parquet", "delta"])
def test_sigkill_during_delete_resurrects_no_key(tmp_path: Path, file_format: str) -> None:
    project = tomb_project(tmp_path, file_format)
    reference = base_run(project, file_format)  # the last run that finished
    problems: list[str] = []
    outcomes: list[str] = []
    landed = {"old": 0, "new": 0}
    outrun = unconfirmed = 0  # runs that ended before their kill; tombstones that don't count
    total = BASE_ROWS
    k = -1
    for point, expected in KILL_POINTS[file_format]:
        for attempt in range(KILL_ATTEMPTS):
            k += 1
            delete = args(*key_range(k), 3, "d")
            finished = kill_on_log(
                project, delete, f"kill{k}", point, point.delay(reference) * 0.8**attempt
            )
            if finished is None:
                break
            check(finished, f"{point.label}: the delete that ended before its kill")
            reference, outrun, total = finished, outrun + 1, total - DELETED
        else:
            problems.append(f"{point.label}: every delete ended before the kill; nothing tested")
            continue
        late = project.run(args(*key_range(k), 2), f"late{k}")
        check(late, f"the run after the kill {point.label} (the late change)")
        reference = late
        after_kill, after_late = late.states()[0], late.states()[-1]
        outcome = {0: "new", DELETED: "old"}.get(after_kill["present"])
        resurrected = 0
        if outcome is None:
            problems.append(f"{point.label}: a partial delete {after_kill}")
        elif expected.committed is not None and (outcome == "new") != expected.committed:
            problems.append(f"{point.label}: the kill left the {outcome} state {after_kill}")
        if outcome == "new":
            total -= DELETED
            resurrected = after_late["present"]
            if resurrected:
                problems.append(f"{point.label}: {resurrected} deleted keys back {after_late}")
        elif outcome == "old":
            # nothing committed: no tombstone of the killed run counts, the late change
            # (version 2, newer than the stored 1) applies to every key
            unconfirmed += after_kill["tombs"] or 0
            if after_late["at_ver"] != DELETED:
                problems.append(f"{point.label}: the late change left {after_late}")
        if after_late["total"] != total:
            problems.append(f"{point.label}: {after_late['total']} rows, expected {total}")
        written = after_kill["tombs"] or 0
        if expected.tombstones is not None and written != DELETED * expected.tombstones:
            problems.append(f"{point.label}: {written} tombstones written at the kill")
        if outcome:
            landed[outcome] += 1
        outcomes.append(
            f"{point.label}: old={int(outcome == 'old')} new={int(outcome == 'new')} "
            f"resurrected={resurrected}"
        )

    if file_format == "delta" and not unconfirmed:
        problems.append("no kill left tombstones without their commit")
    report(
        f"tombstone crash ({file_format}): "
        + "; ".join(outcomes)
        + f" | kills before the commit {landed['old']}, after it {landed['new']}; "
        + (
            f"{unconfirmed} tombstones written without their commit, none counted; "
            * bool(unconfirmed)
        )
        + f"{outrun} run(s) outran their kill"
    )
    assert problems == [], "\n".join(first_line(p, 600) for p in problems)
