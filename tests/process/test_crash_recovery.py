"""A real crash: `dbt run` (a parquet mutable_table upsert with a changelog, and a topic
publish) killed
with SIGKILL -- dbt and its Spark JVM, the whole process group -- at points spread over
the run's duration, found by timing a normal run first (no `jammi_fail_at` hooks).

After each kill the tables must hold exactly the old or the new state, never a mix, and
the next run must converge to the state of the batch the killed run was applying. The
table's changelog may lag its last commit by one version after a kill (the kill fell
between the commit and the publish); after the next run it holds every committed version
exactly once, in order, each one complete.
Every run uses `method: session` on one `session_dir`: the embedded Derby metastore
admits one process at a time, so the state is read by the dbt processes themselves --
the project's on-run-start/on-run-end hooks print it (crash_state below) -- never by a
Spark session in the pytest process.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.process.harness import (
    DbtProject,
    DbtResult,
    changelog_problem,
    check,
    classify,
    points_from_env,
    report,
    session_target,
)

# The full crash lane's kill points; the gate's crash slice sets one (JAMMI_CRASH_KILL_FRACTIONS).
KILL_FRACTIONS = points_from_env("JAMMI_CRASH_KILL_FRACTIONS", (0.1, 0.3, 0.5, 0.7, 0.9))
KILL_ATTEMPTS = 3  # tries per kill point when the run finishes before it
BASE_ROWS = 50_000  # large enough that writing the next version takes a while
GROWTH = 1_000  # batch b writes BASE_ROWS + b * GROWTH keys, all with batch = b
EVENTS = 1_000  # rows per topic publish
ITEMS, EVENTS_MODEL = "crash_items", "crash_events"

ITEMS_SQL = f"""
{{{{ config(materialized='mutable_table', primary_key=['id'], file_format='parquet',
          changelog=true) }}}}
select cast(id as bigint) as id, cast({{{{ var('batch') }}}} as bigint) as batch,
  concat('batch ', {{{{ var('batch') }}}}, ' row ', id) as label
from range({BASE_ROWS} + {{{{ var('batch') }}}} * {GROWTH})
"""

EVENTS_SQL = f"""
{{{{ config(materialized='topic', topic_name='crash.events', file_format='parquet') }}}}
select cast(id as bigint) as event_id, cast({{{{ var('batch') }}}} as bigint) as batch
from range({EVENTS})
"""

# Prints what a reader of the schema sees, as one JSON line, from inside a dbt process.
STATE_MACRO = """
{% macro crash_state(phase) %}
  {%- if execute -%}
    {%- set schema = target.schema -%}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- set tables = [] -%}
    {%- for row in run_query('show tables in ' ~ schema) if not row[2] -%}
      {%- do tables.append(row[1]) -%}
    {%- endfor -%}
    {%- set state = {'phase': phase, 'tables': tables | sort, 'items': none,
                     'events': none, 'topic_registrations': none} -%}
    {%- if 'crash_items' in tables -%}
      {%- set items = [] -%}
      {%- for r in run_query('select batch, count(*), count(distinct id) from '
                             ~ schema ~ '.crash_items group by batch order by batch') -%}
        {%- do items.append([r[0] | int, r[1] | int, r[2] | int]) -%}
      {%- endfor -%}
      {%- set location = namespace(value=none) -%}
      {%- set described = run_query('describe table extended ' ~ schema ~ '.crash_items') -%}
      {%- for r in described if r[0] == 'Location' -%}
        {%- set location.value = r[1] -%}
      {%- endfor -%}
      {%- set changes = [] -%}
      {%- set backing = run_query("select backing_table from " ~ schema
                                  ~ ".topics where relation_name = 'crash_items'") -%}
      {%- for r in run_query("select _offset, count(*), min(batch), max(batch), "
                             ~ "count(distinct _row_idx), sum(if(change_kind = 'insert', 1, 0))"
                             ~ " from " ~ schema ~ "." ~ backing[0][0]
                             ~ " group by _offset order by _offset") -%}
        {%- do changes.append(r | map('int') | list) -%}
      {%- endfor -%}
      {%- do state.update({'items': items, 'location': location.value,
                           'changes': changes}) -%}
    {%- endif -%}
    {%- if 'crash_events' in tables -%}
      {%- set events = [] -%}
      {%- for r in run_query('select _offset, count(*), min(batch), max(batch), '
                             ~ 'count(distinct _row_idx) from ' ~ schema
                             ~ '.crash_events group by _offset order by _offset') -%}
        {%- do events.append([r[0] | int, r[1] | int, r[2] | int, r[3] | int, r[4] | int]) -%}
      {%- endfor -%}
      {%- set registered = run_query("select count(*) from " ~ schema
                                     ~ ".topics where name = 'crash.events'") -%}
      {%- do state.update({'events': events,
                           'topic_registrations': registered[0][0] | int}) -%}
    {%- endif -%}
    {{- print('JAMMI_STATE ' ~ tojson(state)) -}}
  {%- endif -%}
{% endmacro %}
"""


def expected_items(batch: int) -> list[list[int]]:
    rows = BASE_ROWS + batch * GROWTH
    return [[batch, rows, rows]]


def published_batches(events: list[list[int]] | None) -> list[int] | None:
    """The batches the topic holds, in offset order, if every offset is one complete
    publish (EVENTS rows of one batch); None for anything else."""
    if events is None:
        return None
    offsets = [e[0] for e in events]
    complete = all(e[1] == EVENTS and e[2] == e[3] and e[4] == EVENTS for e in events)
    if not complete or offsets != sorted(set(offsets)):
        return None
    return [e[2] for e in events]


def run_args(batch: int, models: tuple[str, ...] = (ITEMS, EVENTS_MODEL)) -> list[str]:
    return ["run", "--vars", json.dumps({"batch": batch}), "--select", *models]


@pytest.fixture
def crash_project(tmp_path: Path) -> DbtProject:
    target = session_target("crash", tmp_path / "spark")
    return DbtProject(
        root=tmp_path / "project",
        target=target,
        models={f"{ITEMS}.sql": ITEMS_SQL, f"{EVENTS_MODEL}.sql": EVENTS_SQL},
        macros={"crash_state.sql": STATE_MACRO},
        project_config={
            "on-run-start": ["{{ crash_state('before') }}"],
            "on-run-end": ["{{ crash_state('after') }}"],
        },
    ).write()


def kill_at(
    project: DbtProject, batch: int, seconds: float, tag: str, args: list[str] | None = None
) -> DbtResult | None:
    """Start the run for `batch` (or `args`) and SIGKILL it `seconds` after it started.
    None when it was killed; the run's result when it finished on its own first."""
    process = project.start(args or run_args(batch), tag)
    try:
        process.popen.wait(timeout=max(process.started + seconds - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        process.kill()
        return None
    return process.wait()


def test_sigkill_during_run_leaves_old_or_new_state(crash_project: DbtProject) -> None:
    project = crash_project
    check(project.run(run_args(1), "batch1"), "first run")
    measured = project.run(run_args(2), "batch2")
    check(measured, "measured run")
    duration = measured.seconds
    durations = [duration]
    published = [1, 2]  # the batches the topic holds, in offset order
    counts = {
        model: {"kills": 0, "old": 0, "new": 0, "mixed": 0, "recovered": 0}
        for model in (ITEMS, EVENTS_MODEL)
    }
    problems: list[str] = []
    outrun = 0  # runs that finished before their kill point
    changelog_lagged = changelog_recovered = 0  # kills between commit and publish; repairs
    last_version = None  # the table's version after the last recovery

    batch = 2
    for index, fraction in enumerate(KILL_FRACTIONS):
        # A run can outrun its kill point (run times vary by some seconds): that run
        # then applied its batch as a normal run; the point is tried again on the next
        # batch, timed from the run that just finished and a tenth earlier each time.
        for attempt in range(KILL_ATTEMPTS):
            batch += 1
            at = fraction * duration * 0.9**attempt
            point = f"kill at {at:.0f}s of a {duration:.0f}s run (batch {batch})"
            finished = kill_at(project, batch, at, f"kill{index}-{attempt}")
            if finished is None:
                break
            check(finished, f"{point}: the run that finished before its kill")
            duration = finished.seconds
            durations.append(duration)
            published.append(batch)
            outrun += 1
        else:
            problems.append(
                f"{point}: the run finished before the kill {KILL_ATTEMPTS} times; "
                "nothing was tested"
            )
            continue

        # The next run of the same batch prints the state the crash left (on-run-start),
        # applies the batch and prints the state it converged to (on-run-end).
        recovery = project.run(run_args(batch), f"recover{index}")
        # The recovery is a normal run of the same work: the next kill point is a
        # fraction of its duration, which follows the machine's load as it changes.
        duration = recovery.seconds
        durations.append(duration)
        states = recovery.states()
        crashed, final = (states[0], states[-1]) if len(states) >= 2 else ({}, {})
        check(recovery, f"{point}: recovery run")

        old, new = expected_items(batch - 1), expected_items(batch)
        item_state = classify(crashed.get("items"), old, new)
        event_state = classify(
            published_batches(crashed.get("events")), published, [*published, batch]
        )
        if crashed.get("topic_registrations") != 1:
            event_state = "mixed"
        for model, state in ((ITEMS, item_state), (EVENTS_MODEL, event_state)):
            counts[model]["kills"] += 1
            counts[model][state] += 1
            if state == "mixed":
                seen = crashed.get("items" if model == ITEMS else "events")
                problems.append(f"{point}: {model} holds a mix after the kill: {seen}")

        problem = changelog_problem(crashed, True, BASE_ROWS, GROWTH)
        if problem:
            problems.append(f"{point}: changelog after the kill: {problem}")
        elif len(crashed["changes"]) < crashed["version"]:
            changelog_lagged += 1
        problem = changelog_problem(final, False, BASE_ROWS, GROWTH)
        if problem:
            problems.append(f"{point}: changelog after recovery: {problem}")
        else:
            changelog_recovered += 1

        # A publish is not idempotent: when the killed run's publish committed, the
        # recovery publishes the batch a second time, under the next offset.
        published += [batch, batch] if event_state == "new" else [batch]
        last_version = final.get("version")
        if final.get("items") == expected_items(batch):
            counts[ITEMS]["recovered"] += 1
        else:
            problems.append(f"{point}: {ITEMS} after recovery: {final.get('items')}")
        if published_batches(final.get("events")) == published:
            counts[EVENTS_MODEL]["recovered"] += 1
        else:
            problems.append(f"{point}: {EVENTS_MODEL} after recovery: {final.get('events')}")
            published = published_batches(final.get("events")) or published

    # the changelog is checked after the batches' kills; the rollback's are counted apart
    batch_kills = counts[ITEMS]["kills"]
    problems += rollback_kills(project, batch, last_version, counts[ITEMS])

    for model, c in counts.items():
        report(
            f"crash {model}: kills={c['kills']} old-state={c['old']} new-state={c['new']} "
            f"mixed={c['mixed']} recovered={c['recovered']} (normal runs {min(durations):.0f}-"
            f"{max(durations):.0f}s, "
            f"kills at {', '.join(f'{f:.0%}' for f in KILL_FRACTIONS)}; "
            f"{outrun} run(s) finished before their kill point and were retried)"
        )
    report(
        f"crash changelog: {changelog_recovered} of {batch_kills} recoveries held "
        f"every version exactly once; {changelog_lagged} kill(s) fell between the table "
        "commit and the changelog publish"
    )
    assert problems == [], "\n".join(problems)


# The gate's crash slice sets none (JAMMI_ROLLBACK_KILL_FRACTIONS empty).
ROLLBACK_KILL_FRACTIONS = points_from_env("JAMMI_ROLLBACK_KILL_FRACTIONS", (0.5, 0.9))


def rollback_args(version: int) -> list[str]:
    args = json.dumps({"model": ITEMS, "to_version": version})
    return ["run-operation", "rollback_mutable_table", "--args", args]


def offsets_problem(state: dict, lag_allowed: bool) -> str | None:
    """After rollbacks the changelog's versions are no longer one batch each: every
    committed version must still be published exactly once, in order."""
    version, offsets = state.get("version"), [c[0] for c in state.get("changes") or []]
    if version is not None and (
        offsets == list(range(1, version + 1))
        or (lag_allowed and offsets == list(range(1, version)))
    ):
        return None
    return f"changelog offsets {offsets} for table version {version}"


def rollback_kills(project: DbtProject, batch: int, version: int | None, counts: dict) -> list[str]:
    """`rollback_mutable_table` SIGKILLed at measured points: the table holds the rows
    before or after the rollback, never a mix, its changelog every committed version
    once; the next run converges. The points are fractions of a measured rollback's
    duration (a rollback that finishes before its point is retried earlier, timed from
    itself). The version before the current one holds batch - 1's rows whatever the
    kills above left (a killed run committed `batch`, or its recovery did): the measured
    rollback goes there, the first kill back to `batch`'s rows, the next one back to
    the version that kill left."""
    if not ROLLBACK_KILL_FRACTIONS:
        return []  # no rollback kill point asked for (the gate's crash slice)
    if version is None:
        return ["rollback kills: no recovery run left a version to roll back from"]
    problems: list[str] = []
    # the measured rollback: back to batch - 1's rows (one version more)
    measured = project.run(rollback_args(version - 1), "rollback-measured")
    assert measured.returncode == 0, measured.output[-2000:]
    duration = measured.seconds
    old, new, current = expected_items(batch - 1), expected_items(batch), version + 1
    finished_early = 0
    for index, fraction in enumerate(ROLLBACK_KILL_FRACTIONS):
        for attempt in range(KILL_ATTEMPTS):
            at = fraction * 0.9**attempt * duration
            point = f"rollback killed at {at:.0f}s of a {duration:.0f}s rollback"
            args = rollback_args(current - 1)
            finished = kill_at(project, 0, at, f"rbkill{index}-{attempt}", args)
            if finished is None:
                break
            # it committed before the kill point: one version more, and rolling back to
            # the version before it swaps old and new; try again, timed from this one
            assert finished.returncode == 0, finished.output[-2000:]
            finished_early += 1
            current, old, new = current + 1, new, old
            duration = finished.seconds
        else:
            problems.append(f"{point}: the rollback finished before its kill every time")
            continue
        batch += 1
        recovery = project.run(run_args(batch), f"rbrecover{index}")
        check(recovery, f"{point}: recovery run")
        states = recovery.states()
        crashed, final = states[0], states[-1]
        state = classify(crashed.get("items"), old, new)
        counts["kills"] += 1
        counts[state] += 1
        if state == "mixed":
            problems.append(f"{point}: {ITEMS} holds a mix: {crashed.get('items')}")
        for label, seen, lag in (
            ("after the kill", crashed, True),
            ("after recovery", final, False),
        ):
            problem = offsets_problem(seen, lag)
            if problem:
                problems.append(f"{point}: {label}: {problem}")
        if final.get("items") == expected_items(batch):
            counts["recovered"] += 1
        else:
            problems.append(f"{point}: {ITEMS} after recovery: {final.get('items')}")
        # next: roll the recovered table back to the version the kill left
        old, new, current = expected_items(batch), crashed.get("items"), final["version"]
    report(
        "crash rollback_mutable_table: kills at "
        f"{', '.join(f'{f:.0%}' for f in ROLLBACK_KILL_FRACTIONS)} of a {duration:.0f}s "
        f"rollback; {finished_early} rollback(s) finished before their kill point and were "
        f"retried (the kills are counted in the {ITEMS} line)"
    )
    return problems
