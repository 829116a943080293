"""An identity column's numbers across a real crash on Iceberg: an insert run of new keys
into an Iceberg mutable_table with `identity_column` and `changelog: true`, killed with
SIGKILL (dbt and its Spark JVM) at named phases of its branch commit
(commit/branch_commit.py) found in its own dbt.log (log_points.py), then a run inserting
further new keys. That run must succeed (it recovers from whatever the kill left) and:

- the killed run's keys are all stored, or none (old or new state, never a mix);
- no number is held by two keys, and the next run's keys get numbers above every number
  stored before (a number is never handed out twice, the killed run's included);
- the changelog holds every committed version once (offsets 1..n) and the inserts of
  exactly the keys that committed.

The kills land in the branch MERGE (nothing committed; the run's identity mark and
changelog record are not written yet), between the records and the fast-forward (they
are written and must not count) and after the fast-forward, before the changelog's
publish (committed; the next run publishes it). Iceberg's session catalog with one
writer at a time, as in test_tombstone_crash.py; skipped where Iceberg does not load, or
fails with JAMMI_ICEBERG_REQUIRED=1.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from iceberg_probe import SINGLE_WRITER_CONFS  # scripts/, on the path by tests/conftest.py

from dbt.adapters.jammi.engine.jar_releases import iceberg_release, installed_pyspark_version
from tests.conftest import session_parameters
from tests.process.harness import DbtProject, check, first_line, report, session_target
from tests.process.log_points import KillPoint, kill_on_log

BASE_ROWS = 2_000
BATCH = 400  # keys each insert run adds
MODEL = "ident_iceberg"
KILL_ATTEMPTS = 3

BRANCH_MERGE = rf"merge into \S+\.{MODEL}\.branch_jammi_run_\w+ as t"
FAST_FORWARD = rf"call spark_catalog\.system\.fast_forward\('\S+\.{MODEL}', 'main'"

# (point, whether the killed run's keys must be stored after it)
KILL_POINTS = (
    (KillPoint("in the branch MERGE", BRANCH_MERGE), False),
    (KillPoint("between the records and the fast-forward", FAST_FORWARD), False),
    (KillPoint("after the fast-forward", FAST_FORWARD, completed=True), True),
)

ITEMS_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='iceberg',
          identity_column='item_no', changelog=true) }}
{%- set run = var('ident_iceberg', {'lo': 0, 'hi': 0}) %}
select cast(id as bigint) as id, concat('row ', id) as label
from range({{ run.lo }}, {{ run.hi }})
"""

# Prints the keys of the killed range (var killed: [lo, hi)) and of the run's own range,
# the identity numbers and the changelog's offsets and insert events per range. The
# table and its changelog topic (an Iceberg table too) are read under a LIMIT: Spark 3.5
# fails planning these conditional aggregates when Iceberg's aggregate push-down takes
# them (an internal assertion in PushDown).
STATE_MACRO = """
{% macro ident_state(phase) %}
  {%- if execute -%}
    {%- set schema = target.schema -%}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- set run = var('ident_iceberg', {'lo': 0, 'hi': 0}) -%}
    {%- set killed = var('killed', {'lo': 0, 'hi': 0}) -%}
    {%- set mine = 'id >= ' ~ run.lo ~ ' and id < ' ~ run.hi -%}
    {%- set theirs = 'id >= ' ~ killed.lo ~ ' and id < ' ~ killed.hi -%}
    {%- set state = {'phase': phase} -%}
    {%- if load_relation(api.Relation.create(schema=schema, identifier='ident_iceberg')) -%}
      {%- set r = run_query('select count(*), count(distinct item_no), max(item_no), '
                            ~ 'count_if(' ~ theirs ~ '), count_if(' ~ mine ~ '), '
                            ~ 'min(if(' ~ mine ~ ', item_no, null)), '
                            ~ 'max(if(' ~ mine ~ ', null, item_no)) from (select * from '
                            ~ schema ~ '.ident_iceberg limit 1000000000) as t')[0] -%}
      {%- do state.update({'rows': r[0] | int, 'numbers': r[1] | int, 'top': r[2] | int,
                           'killed': r[3] | int, 'mine': r[4] | int,
                           'mine_min': r[5], 'others_max': r[6]}) -%}
      {%- set backing = run_query("select backing_table from " ~ schema ~ ".topics "
                                  ~ "where relation_name = 'ident_iceberg'") -%}
      {%- set e = run_query('select count(distinct _offset), coalesce(max(_offset), 0), '
                            ~ "count_if(" ~ theirs ~ " and change_kind = 'insert'), "
                            ~ "count_if(" ~ mine ~ " and change_kind = 'insert') from "
                            ~ '(select * from ' ~ schema ~ '.' ~ backing[0][0]
                            ~ ' limit 1000000000) as t')[0] -%}
      {%- do state.update({'versions': e[0] | int, 'last': e[1] | int,
                           'killed_events': e[2] | int, 'mine_events': e[3] | int}) -%}
    {%- endif -%}
    {{- print('JAMMI_STATE ' ~ tojson(state)) -}}
  {%- endif -%}
{% endmacro %}
"""


def args(lo: int, hi: int, killed: tuple[int, int] = (0, 0)) -> list[str]:
    runs = {MODEL: {"lo": lo, "hi": hi}, "killed": {"lo": killed[0], "hi": killed[1]}}
    return ["run", "--select", MODEL, "--vars", json.dumps(runs)]


def ident_project(root: Path) -> DbtProject:
    target = session_target("ident", root / "spark")
    target["server_side_parameters"].update(
        {**session_parameters("iceberg"), **SINGLE_WRITER_CONFS}
    )
    return DbtProject(
        root=root / "project",
        target=target,
        models={f"{MODEL}.sql": ITEMS_SQL},
        macros={"ident_state.sql": STATE_MACRO},
        project_config={
            "on-run-start": ["{{ ident_state('before') }}"],
            "on-run-end": ["{{ ident_state('after') }}"],
        },
    ).write()


def judge(label: str, committed: bool, after: dict, rows: int) -> list[str]:
    """What the next run found: the killed keys, the numbers and the changelog."""
    problems = []
    if after["killed"] != BATCH * committed:
        problems.append(f"{label}: {after['killed']} of the killed run's keys stored")
    if after["rows"] != rows or after["numbers"] != rows:
        problems.append(f"{label}: {after['rows']} rows hold {after['numbers']} numbers")
    if after["mine"] != BATCH or after["mine_min"] <= after["others_max"]:
        problems.append(
            f"{label}: the next run's numbers start at {after['mine_min']}, "
            f"at or below the stored {after['others_max']}"
        )
    if after["versions"] != after["last"]:
        problems.append(f"{label}: changelog offsets {after['versions']} of 1..{after['last']}")
    if (after["killed_events"], after["mine_events"]) != (BATCH * committed, BATCH):
        problems.append(
            f"{label}: changelog inserts {after['killed_events']} of the killed run's keys, "
            f"{after['mine_events']} of the next run's"
        )
    return problems


def test_sigkill_during_an_iceberg_insert_reuses_no_number(tmp_path: Path) -> None:
    required = os.environ.get("JAMMI_ICEBERG_REQUIRED") == "1"
    spark = installed_pyspark_version()
    if iceberg_release(spark) is None and not os.environ.get("JAMMI_ICEBERG_JARS"):
        reason = f"no Iceberg runtime for PySpark {spark}"
        if required:
            pytest.fail(f"Iceberg is required (JAMMI_ICEBERG_REQUIRED=1): {reason}")
        pytest.skip(reason)
    project = ident_project(tmp_path)
    base = project.run(args(0, BASE_ROWS), "base")
    if base.returncode != 0 and not required and "iceberg" in base.output.lower():
        pytest.skip(f"Iceberg did not load: {first_line(base.output, 300)}")
    check(base, "base run (Iceberg)")
    assert base.states()[-1]["rows"] == BASE_ROWS, base.states()

    rows, lo, reference = BASE_ROWS, BASE_ROWS, base
    problems, outcomes, repaired, outrun = [], [], 0, 0
    for index, (point, committed) in enumerate(KILL_POINTS):
        for attempt in range(KILL_ATTEMPTS):
            killed = (lo, lo + BATCH)
            lo += BATCH
            delay = point.delay(reference) * 0.8**attempt
            finished = kill_on_log(project, args(*killed), f"kill{index}-{attempt}", point, delay)
            if finished is None:
                break
            check(finished, f"{point.label}: the insert that ended before its kill")
            rows, outrun = rows + BATCH, outrun + 1
        else:
            problems.append(f"{point.label}: every insert ended before the kill")
            continue
        nxt = project.run(args(lo, lo + BATCH, killed), f"next{index}")
        check(nxt, f"the run after the kill {point.label}")
        after = nxt.states()[-1]
        stored = after["killed"] == BATCH
        rows += BATCH * stored + BATCH
        lo += BATCH
        problems += judge(point.label, committed, after, rows)
        repaired += "its run stopped after the commit" in nxt.log()
        outcomes.append(f"{point.label}: old={int(not stored)} new={int(stored)}")
        reference = nxt
    report(
        "identity crash (iceberg): "
        + "; ".join(outcomes)
        + f" | problems: {len(problems)} (a reused number, a partial insert, a changelog "
        f"version missing or twice); {repaired} version(s) published by the next run; "
        f"{outrun} run(s) outran their kill"
    )
    assert problems == [], "\n".join(first_line(p, 600) for p in problems)
