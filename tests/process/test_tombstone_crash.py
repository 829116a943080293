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
(`make jars` fills the local repository); when it cannot load, the parquet table runs
alone and the test is skipped after it passes, or fails with JAMMI_DELTA_REQUIRED=1.

Iceberg (its own session: Iceberg's session catalog, one writer at a time, so without
Hive's table lock): the run MERGEs into a branch of its own, appends the tombstones
tagged with the branch's snapshot, and fast-forwards the table to it
(commit/branch_commit.py). The Iceberg table keeps a changelog too, whose staged events
and record go into the same branch (rules/changelog_iceberg.py). The kills land in the
branch MERGE, between the records (tombstones, changelog) and the fast-forward (the
tombstones are written and do not count) and after the fast-forward, before the
changelog's publish. After each kill's next run the changelog holds every committed
version once (offsets 1..n, none missing or repeated) and exactly the events of what
committed: the killed delete's when it committed, the late change's when it did not.
Skipped where Iceberg does not load, or fails with JAMMI_ICEBERG_REQUIRED=1.

The parquet and Delta tables live in one embedded session (one project): at each kill
point the parquet delete and the Delta delete are killed in their own runs, then one
run applies both late changes -- a dbt process (a JVM start) fewer per point than a
session per format. The state is read by the dbt processes themselves
(on-run-start/-end hooks), as in test_crash_recovery.py: the embedded Derby metastore
admits one process at a time.
"""

from __future__ import annotations

import json
import os
import re
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

KILL_ATTEMPTS = 3  # tries per kill point when the run ends before it
BASE_ROWS = 4_000
DELETED = 400  # keys each delete run deletes: [k * DELETED, (k + 1) * DELETED)

SWAP = r"alter table \S+\.tomb_parquet set location"
MERGE = r"merge into \S+\.tomb_delta as t"
BRANCH_MERGE = r"merge into \S+\.tomb_iceberg\.branch_jammi_run_\w+ as t"
FAST_FORWARD = r"call spark_catalog\.system\.fast_forward\('\S+\.tomb_iceberg', 'main'"


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
    "iceberg": (
        (KillPoint("in the branch MERGE", BRANCH_MERGE), Expected(False, tombstones=False)),
        (
            KillPoint("between the tombstone append and the fast-forward", FAST_FORWARD),
            Expected(False, tombstones=True),
        ),
        (
            KillPoint("after the fast-forward", FAST_FORWARD, completed=True),
            Expected(True, True),
        ),
    ),
}

ITEMS_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='FILE_FORMAT',
          version_column='ver', delete_when="op = 'd'", changelog=CHANGELOG) }}
{%- set run = var(model.name, {'lo': 0, 'hi': 0, 'ver': 0, 'op': ''}) %}
select cast(id as bigint) as id, cast({{ run.ver }} as bigint) as ver,
  '{{ run.op }}' as op, concat('ver ', {{ run.ver }}, ' row ', id) as label
from range({{ run.lo }}, {{ run.hi }})
"""

# Prints, per table the run writes (its var: the range [lo, hi) and the version): the
# stored keys of the range, those at the run's version, its Delta tombstones (committed
# or not; none on parquet) and the table's row count. The Iceberg changelog topic is read
# under a LIMIT (Iceberg's aggregate push-down fails Spark 3.5's planning of these
# aggregates; tests/process/test_iceberg_identity_crash.py).
STATE_MACRO = """
{% macro tomb_state(phase) %}
  {%- if execute -%}
    {%- set schema = target.schema -%}
    {%- do run_query('create schema if not exists ' ~ schema) -%}
    {%- set state = {'phase': phase, 'tables': {}} -%}
    {%- for name in ['tomb_parquet', 'tomb_delta', 'tomb_iceberg'] if var(name, none) -%}
      {%- set run = var(name) -%}
      {%- set in_range = 'id >= ' ~ run.lo ~ ' and id < ' ~ run.hi -%}
      {%- set table = {'present': none, 'at_ver': none, 'total': none, 'tombs': none} -%}
      {%- if load_relation(api.Relation.create(schema=schema, identifier=name)) -%}
        {%- set r = run_query('select count_if(' ~ in_range ~ '), count_if(' ~ in_range
                              ~ ' and ver = ' ~ run.ver ~ '), count(*) from '
                              ~ schema ~ '.' ~ name)[0] -%}
        {%- do table.update({'present': r[0] | int, 'at_ver': r[1] | int,
                             'total': r[2] | int}) -%}
      {%- endif -%}
      {%- set topics = api.Relation.create(schema=schema, identifier='topics') -%}
      {%- if name == 'tomb_iceberg' and load_relation(topics) -%}
        {%- set backing = run_query("select backing_table from " ~ topics
                                    ~ " where relation_name = '" ~ name ~ "'") -%}
        {%- if backing | length > 0 -%}
          {%- set e = run_query('select count(distinct _offset), coalesce(max(_offset), 0), '
                                ~ "count_if(" ~ in_range ~ " and change_kind = 'delete'), "
                                ~ "count_if(" ~ in_range ~ " and change_kind = 'update') from "
                                ~ '(select * from ' ~ schema ~ '.' ~ backing[0][0]
                                ~ ' limit 1000000000) as t')[0] -%}
          {%- do table.update({'versions': e[0] | int, 'last': e[1] | int,
                               'deleted': e[2] | int, 'updated': e[3] | int}) -%}
        {%- endif -%}
      {%- endif -%}
      {%- set tombs = api.Relation.create(schema=schema,
                                          identifier=name ~ '__jammi_tombstones') -%}
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

# What a session that could not load Delta Lake prints (jars missing or unresolvable).
DELTA_MISSING = re.compile(
    r"unresolved dependency|ClassNotFoundException: \S*delta|DeltaSparkSessionExtension"
    r"|DeltaCatalog|io\.delta\S* not found",
    re.IGNORECASE,
)


def args(runs: dict[str, dict]) -> list[str]:
    """`dbt run` of the tables in ``runs``, each with its var (range, version, op)."""
    return ["run", "--select", *runs, "--vars", json.dumps(runs)]


def rows(k: int, ver: int, op: str = "") -> dict:
    """Keys [k * DELETED, (k + 1) * DELETED) at version ``ver``."""
    return {"lo": k * DELETED, "hi": (k + 1) * DELETED, "ver": ver, "op": op}


def delta_unavailable(reason: str) -> str:
    """Why the Delta case does not run; fails the test where Delta is required (CI)."""
    if os.environ.get("JAMMI_DELTA_REQUIRED") == "1":
        pytest.fail(f"Delta Lake is required (JAMMI_DELTA_REQUIRED=1): {reason}")
    return reason


def tomb_project(root: Path, formats: tuple[str, ...]) -> DbtProject:
    """One project, one embedded session for both tables (Delta loaded when asked)."""
    target = session_target("tomb", root / "spark")
    if "delta" in formats:
        target["server_side_parameters"].update(session_parameters("delta"))
    if "iceberg" in formats:  # one writer at a time: no Hive table lock needed
        target["server_side_parameters"].update(
            {**session_parameters("iceberg"), **SINGLE_WRITER_CONFS}
        )
    return DbtProject(
        root=root / "project",
        target=target,
        models={
            f"tomb_{f}.sql": ITEMS_SQL.replace("FILE_FORMAT", f).replace(
                "CHANGELOG", str(f == "iceberg").lower()
            )
            for f in formats
        },
        macros={"tomb_state.sql": STATE_MACRO},
        project_config={
            "on-run-start": ["{{ tomb_state('before') }}"],
            "on-run-end": ["{{ tomb_state('after') }}"],
        },
    ).write()


@dataclass
class Lane:
    """One table's kills and what they left."""

    file_format: str
    total: int = BASE_ROWS  # the rows the table must hold
    k: int = -1  # the last key range a delete of it used
    reference: Optional[DbtResult] = None  # the last run of it that finished
    outcomes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    landed: dict = field(default_factory=lambda: {"old": 0, "new": 0})
    outrun: int = 0  # deletes that ended before their kill point
    unconfirmed: int = 0  # tombstones written by deletes that did not commit
    changelog_held: int = 0  # kills after which the changelog held every version once
    changelog_repaired: int = 0  # late runs that published a killed run's version

    @property
    def model(self) -> str:
        return f"tomb_{self.file_format}"

    def kill(self, project: DbtProject, point: KillPoint) -> bool:
        """A delete killed at ``point`` (tried again when it ends first); False if never."""
        for attempt in range(KILL_ATTEMPTS):
            self.k += 1
            delay = point.delay(self.reference) * 0.8**attempt
            run = args({self.model: rows(self.k, 3, "d")})
            finished = kill_on_log(project, run, f"{self.model}-kill{self.k}", point, delay)
            if finished is None:
                return True
            check(finished, f"{self.model} {point.label}: the delete that ended before its kill")
            self.reference, self.outrun, self.total = (
                finished,
                self.outrun + 1,
                self.total - DELETED,
            )
        self.problems.append(f"{point.label}: every delete ended before the kill")
        return False

    def judge(self, point: KillPoint, expected: Expected, late: DbtResult) -> None:
        """What the kill left (the late run's first state) and what the late change did."""
        after_kill = late.states()[0]["tables"][self.model]
        after_late = late.states()[-1]["tables"][self.model]
        outcome = {0: "new", DELETED: "old"}.get(after_kill["present"])
        resurrected, label = 0, point.label
        if outcome is None:
            self.problems.append(f"{label}: a partial delete {after_kill}")
        elif expected.committed is not None and (outcome == "new") != expected.committed:
            self.problems.append(f"{label}: the kill left the {outcome} state {after_kill}")
        if outcome == "new":
            self.total -= DELETED
            resurrected = after_late["present"]
            if resurrected:
                self.problems.append(f"{label}: {resurrected} deleted keys back {after_late}")
        elif outcome == "old":
            # nothing committed: no tombstone of the killed run counts, the late change
            # (version 2, newer than the stored 1) applies to every key
            self.unconfirmed += after_kill["tombs"] or 0
            if after_late["at_ver"] != DELETED:
                self.problems.append(f"{label}: the late change left {after_late}")
        if after_late["total"] != self.total:
            self.problems.append(f"{label}: {after_late['total']} rows, expected {self.total}")
        written = after_kill["tombs"] or 0
        if expected.tombstones is not None and written != DELETED * expected.tombstones:
            self.problems.append(f"{label}: {written} tombstones written at the kill")
        if outcome and "versions" in after_late:
            self.judge_changelog(label, outcome, after_late)
            # the late run published what the killed run committed and did not publish
            self.changelog_repaired += "its run stopped after the commit" in late.log()
        if outcome:
            self.landed[outcome] += 1
        self.outcomes.append(
            f"{label}: old={int(outcome == 'old')} new={int(outcome == 'new')} "
            f"resurrected={resurrected}"
        )

    def judge_changelog(self, label: str, outcome: str, after_late: dict) -> None:
        """Iceberg's changelog after the late run (which repairs an unpublished version):
        every committed version once, and the events of what committed in the range."""
        versions, last = after_late["versions"], after_late["last"]
        if versions != last:
            self.problems.append(f"{label}: changelog offsets {versions} distinct of 1..{last}")
        expected = (DELETED, 0) if outcome == "new" else (0, DELETED)
        found = (after_late["deleted"], after_late["updated"])
        if found != expected:
            self.problems.append(
                f"{label}: changelog (deletes, updates) {found} in the range, expected {expected}"
            )
        self.changelog_held += found == expected and versions == last

    def report(self) -> None:
        if self.file_format in ("delta", "iceberg") and not self.unconfirmed:
            self.problems.append("no kill left tombstones without their commit")
        report(
            f"tombstone crash ({self.file_format}): "
            + "; ".join(self.outcomes)
            + f" | kills before the commit {self.landed['old']}, after it {self.landed['new']}; "
            + f"{self.unconfirmed} tombstones written without their commit, none counted; "
            * bool(self.unconfirmed)
            + f"{self.outrun} run(s) outran their kill"
            + (
                f"; changelog exactly once after {self.changelog_held} kill(s), "
                f"{self.changelog_repaired} published by the next run"
            )
            * (self.file_format == "iceberg")
        )


def start(tmp_path: Path) -> tuple[DbtProject, list[Lane], Optional[str]]:
    """The project after its base run, its lanes, and why Delta does not run (or None)."""
    formats: tuple[str, ...] = ("parquet", "delta")
    skipped = None
    if delta_release(installed_pyspark_version()) is None and not os.environ.get(
        "JAMMI_DELTA_JARS"
    ):
        skipped = delta_unavailable(f"no Delta Lake release for {installed_pyspark_version()}")
        formats = ("parquet",)
    project = tomb_project(tmp_path / "-".join(formats), formats)
    base = project.run(args({f"tomb_{f}": rows(0, 1) | {"hi": BASE_ROWS} for f in formats}), "base")
    missing = [ln for ln in base.output.splitlines() if DELTA_MISSING.search(ln)]
    if skipped is None and base.returncode != 0 and missing:
        skipped = delta_unavailable(f"Delta Lake did not load: {missing[0].strip()[:300]}")
        formats = ("parquet",)
        project = tomb_project(tmp_path / "parquet", formats)
        base = project.run(args({"tomb_parquet": rows(0, 1) | {"hi": BASE_ROWS}}), "base")
    check(base, "base run")
    lanes = [Lane(f, reference=base) for f in formats]
    for lane in lanes:
        assert base.states()[-1]["tables"][lane.model]["present"] == BASE_ROWS, base.states()
    return project, lanes, skipped


def kill_at_every_point(project: DbtProject, lanes: list[Lane]) -> None:
    """Each point: every lane's delete killed there, then one run of the late changes;
    fails with every lane's problems."""
    for index in range(len(KILL_POINTS[lanes[0].file_format])):
        # each table's delete killed at its point, then one run of both late changes
        killed = [
            lane for lane in lanes if lane.kill(project, KILL_POINTS[lane.file_format][index][0])
        ]
        late = project.run(args({lane.model: rows(lane.k, 2) for lane in lanes}), f"late{index}")
        check(late, f"the run after the kills at point {index} (the late changes)")
        for lane in lanes:
            lane.reference = late
            if lane in killed:
                lane.judge(*KILL_POINTS[lane.file_format][index], late)
    for lane in lanes:
        lane.report()
    problems = [f"{lane.file_format} {p}" for lane in lanes for p in lane.problems]
    assert problems == [], "\n".join(first_line(p, 600) for p in problems)


def test_sigkill_during_delete_resurrects_no_key(tmp_path: Path) -> None:
    project, lanes, delta_skipped = start(tmp_path)
    kill_at_every_point(project, lanes)
    if delta_skipped:
        report(f"tombstone crash (delta): skipped: {delta_skipped}")
        pytest.skip(f"parquet passed; Delta did not run: {delta_skipped}")


def test_sigkill_during_an_iceberg_delete_resurrects_no_key(tmp_path: Path) -> None:
    required = os.environ.get("JAMMI_ICEBERG_REQUIRED") == "1"
    spark = installed_pyspark_version()
    if iceberg_release(spark) is None and not os.environ.get("JAMMI_ICEBERG_JARS"):
        reason = f"no Iceberg runtime for PySpark {spark}"
        if required:
            pytest.fail(f"Iceberg is required (JAMMI_ICEBERG_REQUIRED=1): {reason}")
        pytest.skip(reason)
    project = tomb_project(tmp_path / "iceberg", ("iceberg",))
    base = project.run(args({"tomb_iceberg": rows(0, 1) | {"hi": BASE_ROWS}}), "base")
    if base.returncode != 0 and not required and "iceberg" in base.output.lower():
        pytest.skip(f"Iceberg did not load: {first_line(base.output, 300)}")
    check(base, "base run (Iceberg)")
    assert base.states()[-1]["tables"]["tomb_iceberg"]["present"] == BASE_ROWS, base.states()
    kill_at_every_point(project, [Lane("iceberg", reference=base)])
