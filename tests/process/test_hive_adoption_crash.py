"""A Hive-format table's adoption across a real crash (docs/mutable_table.md#existing-
relations): the run that rewrites a Hive text table as the model's format is killed
with SIGKILL (dbt and its Spark JVM) at each point of the rewrite, found in the run's
own dbt.log:

- in the copy (``create table <name>__jammi_adopting ... as select``), halfway through
  the time it took in a reference run;
- after the copy, before the Hive table is renamed aside;
- after the Hive table is renamed to ``<name>__jammi_hive``, before the copy takes the
  name;
- after the copy took the name, before the run's own commit.

The next run, with the same batch (10 stored keys changed, 10 new), must then succeed
and leave: every stored key once, the batch applied, the Hive table under its kept name
with every row it had, and no copy left beside it. parquet (the rewrite applier) and
Delta (the MERGE applier) share one embedded session, as in test_tombstone_crash.py.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

from dbt.adapters.jammi.engine.jar_releases import delta_release, installed_pyspark_version
from tests.conftest import session_parameters
from tests.process.harness import DbtProject, DbtResult, check, report, session_target
from tests.process.log_points import KillPoint, kill_on_log

KEYS = 20000  # rows of each Hive table
CHANGED = 10  # stored keys the batch changes (at version 2), and keys it adds

MODEL_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='v',
          file_format='FILE_FORMAT') }}
select cast(id as bigint) as id, concat('run ', id) as name, cast(2 as bigint) as v
from range(0, CHANGED)
union all
select cast(id as bigint), concat('run ', id), cast(1 as bigint) from range(KEYS, KEYS + CHANGED)
""".replace("KEYS", str(KEYS)).replace("CHANGED", str(CHANGED))

# make_hive: Hive text tables of KEYS rows at version 1 (no `using`: Hive's format);
# hive_state: per table, whether it, its kept Hive table and a copy beside it exist, its
# provider, its rows, its rows at version 2 and its distinct keys, and the kept rows.
MACROS = """
{% macro make_hive(names, keys) %}
  {%- do run_query('create schema if not exists ' ~ target.schema) -%}
  {%- for name in names -%}
    {%- set relation = target.schema ~ '.' ~ name -%}
    {%- do run_query('create table ' ~ relation
                     ~ ' (id bigint, name string, v bigint) stored as textfile') -%}
    {%- do run_query('insert into ' ~ relation ~ " select id, concat('hive ', id), 1L from range("
                     ~ keys ~ ')') -%}
  {%- endfor -%}
{% endmacro %}

{% macro hive_state(names) %}
  {%- set state = {} -%}
  {%- for name in names -%}
    {%- set found = {} -%}
    {%- for suffix in ['', '__jammi_hive', '__jammi_adopting'] -%}
      {%- set relation = api.Relation.create(schema=target.schema, identifier=name ~ suffix) -%}
      {%- do found.update({suffix or 'table': load_relation(relation) is not none}) -%}
    {%- endfor -%}
    {%- set table = {'exists': found['table'], 'kept': none, 'copy': found['__jammi_adopting']} -%}
    {%- if found['table'] -%}
      {%- set relation = target.schema ~ '.' ~ name -%}
      {%- set r = run_query('select count(*), count_if(v = 2), count(distinct id) from '
                            ~ relation)[0] -%}
      {%- do table.update({'rows': r[0] | int, 'at_2': r[1] | int, 'keys': r[2] | int}) -%}
      {%- for row in run_query('describe table extended ' ~ relation) -%}
        {%- if row[0] | trim == 'Provider' -%}
          {%- do table.update({'provider': row[1] | trim | lower}) -%}
        {%- endif -%}
      {%- endfor -%}
    {%- endif -%}
    {%- if found['__jammi_hive'] -%}
      {%- set k = run_query('select count(*), count_if(v = 1) from ' ~ target.schema ~ '.'
                            ~ name ~ '__jammi_hive')[0] -%}
      {%- do table.update({'kept': k[0] | int, 'kept_v1': k[1] | int}) -%}
    {%- endif -%}
    {%- do state.update({name: table}) -%}
  {%- endfor -%}
  {{- print('JAMMI_STATE ' ~ tojson(state)) -}}
{% endmacro %}
"""


def kill_points(model: str) -> tuple[tuple[KillPoint, str], ...]:
    """The rewrite's points for the model ``model`` (hive_adoption.HiveConversion), each
    with what a kill there leaves (``left_by``)."""
    copy = rf"create table [`\w.]*{model}__jammi_adopting"
    aside = rf"alter table [`\w.]*\.{model} rename to"
    named = rf"alter table [`\w.]*{model}__jammi_adopting rename to"
    return (
        (KillPoint("in the copy", copy, fraction=0.5), "hive"),
        (KillPoint("after the copy", copy, completed=True), "hive"),
        (KillPoint("after the Hive table was renamed aside", aside, completed=True), "aside"),
        (KillPoint("after the copy took the name", named, completed=True), "rewritten"),
    )


def model_name(file_format: str, point: object) -> str:
    return f"hive_{file_format}_{point}"


def state_of(project: DbtProject, names: list[str], tag: str) -> dict:
    ran = project.run(["run-operation", "hive_state", "--args", json.dumps({"names": names})], tag)
    check(ran, f"{tag}: the state read")
    return ran.states()[-1]


def left_by(table: dict) -> str:
    """Which state a kill left: the Hive table under the model's name (``hive``), it
    renamed aside with the copy beside it (``aside``), or the copy under the name."""
    if table["exists"] and table["kept"] is None:
        return "hive"
    if not table["exists"] and table["kept"] is not None and table["copy"]:
        return "aside"
    if table["exists"] and table["kept"] is not None:
        return "rewritten"
    return f"unexpected {table}"


@dataclass
class HiveLane:
    """One format's adoptions, each killed at its point, and what the next run made."""

    file_format: str
    reference: Optional[DbtResult] = None
    outcomes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    outrun: int = 0

    def names(self) -> list[str]:
        return [model_name(self.file_format, i) for i in range(len(kill_points("m")))]

    def kill_each(self, project: DbtProject) -> dict[str, str]:
        """Each point's adoption killed; what each kill left, by model."""
        left: dict[str, str] = {}
        outran: set[str] = set()
        for index, name in enumerate(self.names()):
            point, _ = kill_points(name)[index]
            delay = point.delay(self.reference)
            finished = kill_on_log(project, ["run", "-s", name], f"{name}-kill", point, delay)
            if finished is not None:
                check(finished, f"{name} {point.label}: the adoption that ended first")
                self.outrun += 1
                outran.add(name)
        after = state_of(project, self.names(), f"{self.file_format}-after-kills")
        for index, name in enumerate(self.names()):
            point, expected = kill_points(name)[index]
            left[name] = left_by(after[name])
            if name not in outran and left[name] != expected:
                self.problems.append(f"{point.label}: the kill left {left[name]}, not {expected}")
        return left

    def judge(self, left: dict[str, str], final: dict) -> None:
        for index, name in enumerate(self.names()):
            label, table = kill_points(name)[index][0].label, final[name]
            expected = {"rows": KEYS + CHANGED, "at_2": CHANGED, "keys": KEYS + CHANGED}
            got = {key: table.get(key) for key in expected}
            lost = KEYS + CHANGED - (table.get("keys") or 0)
            if got != expected:
                self.problems.append(f"{label}: stored {got}, not {expected}")
            if table.get("provider") != self.file_format:
                self.problems.append(f"{label}: a {table.get('provider')} table")
            if (table["kept"], table.get("kept_v1")) != (KEYS, KEYS):
                self.problems.append(f"{label}: the kept Hive table holds {table['kept']} rows")
            if table["copy"]:
                self.problems.append(f"{label}: a copy is left beside the table")
            self.outcomes.append(f"{label}: left {left[name]}, then lost={max(lost, 0)}")

    def report(self) -> None:
        report(
            f"hive adoption crash ({self.file_format}): "
            + "; ".join(self.outcomes)
            + f" | {self.outrun} run(s) outran their kill"
        )


def test_sigkill_inside_a_hive_rewrite_loses_nothing_and_the_next_run_adopts(
    tmp_path: Path,
) -> None:
    formats: tuple[str, ...] = ("parquet", "delta")
    if delta_release(installed_pyspark_version()) is None and not os.environ.get(
        "JAMMI_DELTA_JARS"
    ):
        if os.environ.get("JAMMI_DELTA_REQUIRED") == "1":
            pytest.fail("Delta Lake is required (JAMMI_DELTA_REQUIRED=1)")
        formats = ("parquet",)
    lanes = [HiveLane(f) for f in formats]
    target = session_target("hive", tmp_path / "spark")
    if "delta" in formats:
        target["server_side_parameters"].update(session_parameters("delta"))
    models = {
        f"{name}.sql": MODEL_SQL.replace("FILE_FORMAT", lane.file_format)
        for lane in lanes
        for name in [*lane.names(), model_name(lane.file_format, "ref")]
    }
    project = DbtProject(
        root=tmp_path / "project", target=target, models=models, macros={"hive.sql": MACROS}
    ).write()
    every = [name.removesuffix(".sql") for name in models]
    made = project.run(
        ["run-operation", "make_hive", "--args", json.dumps({"names": every, "keys": KEYS})], "make"
    )
    check(made, "the Hive tables made")
    for lane in lanes:
        lane.reference = project.run(
            ["run", "-s", model_name(lane.file_format, "ref")], f"{lane.file_format}-ref"
        )
        check(lane.reference, f"{lane.file_format}: the reference adoption")
    left = {lane.file_format: lane.kill_each(project) for lane in lanes}
    names = [name for lane in lanes for name in lane.names()]
    recovered = project.run(["run", "-s", *names], "recover")
    check(recovered, "the run after the kills")
    final = state_of(project, names, "final")
    for lane in lanes:
        lane.judge(left[lane.file_format], final)
        lane.report()
    problems = [f"{lane.file_format} {p}" for lane in lanes for p in lane.problems]
    assert problems == [], "\n".join(problems)
    outran = sum(lane.outrun for lane in lanes)
    assert outran < len(names), "every adoption ended before its kill"
    if "delta" not in formats:
        pytest.skip(f"parquet passed; no Delta Lake release for {installed_pyspark_version()}")
