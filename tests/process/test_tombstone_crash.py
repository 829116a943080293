"""Deletes stay deleted across a real crash: a delete run of a parquet mutable table
with a version rule, killed with SIGKILL (dbt and its Spark JVM) at points spread over
its duration, then the late, older change of the same keys. A delete that committed
committed its tombstones with it (they live in the version directory the commit swaps
in), so after the late run no deleted key is back: 0 resurrected keys. A delete that did
not commit deleted nothing, and the late change applies (it is newer than the stored
row). The state is read by the dbt processes themselves (on-run-start/-end hooks), as in
test_crash_recovery.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.process.harness import DbtProject, check, report, session_target
from tests.process.test_crash_recovery import kill_at

KILL_FRACTIONS = (0.3, 0.6, 0.9, 0.97)  # the commit falls in the last tenth
KILL_ATTEMPTS = 3
BASE_ROWS = 40_000
DELETED = 1_000  # keys each delete run deletes: [k * DELETED, (k + 1) * DELETED)
ITEMS = "tomb_items"

ITEMS_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='parquet',
          version_column='ver', delete_when="op = 'd'") }}
select cast(id as bigint) as id, cast({{ var('ver') }} as bigint) as ver,
  '{{ var('op') }}' as op, concat('ver ', {{ var('ver') }}, ' row ', id) as label
from range({{ var('lo') }}, {{ var('hi') }})
"""

# Prints the stored keys of the run's range [lo, hi) and the table's row count.
STATE_MACRO = """
{% macro tomb_state(phase) %}
  {%- if execute -%}
    {%- set schema = target.schema -%}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- set state = {'phase': phase, 'present': none, 'total': none} -%}
    {%- if load_relation(api.Relation.create(schema=schema, identifier='tomb_items')) -%}
      {%- set r = run_query('select count_if(id >= ' ~ var('lo') ~ ' and id < ' ~ var('hi')
                            ~ '), count(*) from ' ~ schema ~ '.tomb_items')[0] -%}
      {%- do state.update({'present': r[0] | int, 'total': r[1] | int}) -%}
    {%- endif -%}
    {{- print('JAMMI_STATE ' ~ tojson(state)) -}}
  {%- endif -%}
{% endmacro %}
"""


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


@pytest.fixture
def tomb_project(tmp_path: Path) -> DbtProject:
    target = session_target("tomb", tmp_path / "spark")
    return DbtProject(
        root=tmp_path / "project",
        target=target,
        models={f"{ITEMS}.sql": ITEMS_SQL},
        macros={"tomb_state.sql": STATE_MACRO},
        project_config={
            "on-run-start": ["{{ tomb_state('before') }}"],
            "on-run-end": ["{{ tomb_state('after') }}"],
        },
    ).write()


def test_sigkill_during_delete_resurrects_no_key(tomb_project: DbtProject) -> None:
    project = tomb_project
    check(project.run(args(0, BASE_ROWS, 1), "base"), "base run")
    # the measured delete, then its late older change: nothing comes back
    measured = project.run(args(*key_range(0), 3, "d"), "delete0")
    check(measured, "measured delete")
    late = project.run(args(*key_range(0), 2), "late0")
    check(late, "late change after the measured delete")
    assert late.states()[-1]["present"] == 0, late.states()
    duration = measured.seconds

    problems: list[str] = []
    counts = {"kills": 0, "committed": 0, "not_committed": 0, "resurrected": 0, "outrun": 0}
    k = 0
    for index, fraction in enumerate(KILL_FRACTIONS):
        for attempt in range(KILL_ATTEMPTS):
            k += 1
            at = fraction * duration * 0.9**attempt
            finished = kill_at(
                project, 0, at, f"kill{index}-{attempt}", args(*key_range(k), 3, "d")
            )
            if finished is None:
                break
            check(finished, f"delete {k} that finished before its kill point")
            counts["outrun"] += 1
            duration = finished.seconds
        else:
            problems.append(f"kill point {fraction:.0%}: every delete finished first")
            continue
        counts["kills"] += 1
        recovery = project.run(args(*key_range(k), 2), f"late{k}")
        check(recovery, f"late change after the delete killed at {at:.0f}s")
        after_kill, after_late = recovery.states()[0], recovery.states()[-1]
        if after_kill["present"] == 0:
            counts["committed"] += 1
            if after_late["present"] != 0:
                counts["resurrected"] += after_late["present"]
                problems.append(f"kill at {at:.0f}s: {after_late['present']} deleted keys back")
        elif after_kill["present"] == DELETED:
            counts["not_committed"] += 1
            if after_late["present"] != DELETED:
                problems.append(f"kill at {at:.0f}s: the late change left {after_late}")
        else:
            problems.append(f"kill at {at:.0f}s: a partial delete {after_kill}")

    report(
        f"tombstone crash: kills={counts['kills']} delete-committed={counts['committed']} "
        f"not-committed={counts['not_committed']} resurrected-keys={counts['resurrected']} "
        f"(a {measured.seconds:.0f}s delete run; {counts['outrun']} run(s) outran their kill)"
    )
    assert problems == [], "\n".join(problems)
