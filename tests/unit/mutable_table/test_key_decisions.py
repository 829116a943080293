"""The key's actions (key_decisions.py) against the decision list the docs state, for
every definition shape and every combination of a key's facts; and the three forms the
appliers render (the change set's CASE, the batch MERGE's clauses, a snapshot feed's
filter), evaluated as SQL by sqlite with the facts as parameters."""

from __future__ import annotations

import itertools
import sqlite3
from typing import Optional

import pytest

from dbt.adapters.jammi.mutable_table.key_decisions import KeyDecisions

FACTS = ("stored", "in_batch", "is_delete", "newer", "tombstoned", "same")
SHAPES = [
    KeyDecisions(deletes=d, updates=u, tombstones=t)
    for d, u, t in itertools.product([False, True], repeat=3)
]
TERMS = {fact: f":{fact}" for fact in FACTS}
DB = sqlite3.connect(":memory:")


def reference(shape: KeyDecisions, f: dict, absent_deletes: bool) -> Optional[str]:
    """docs/mutable_table.md's decisions, in the order the planner wrote them before the
    guards (change_set.sql's CASE up to issue 50)."""
    if not f["in_batch"]:
        return "delete" if absent_deletes else None
    if shape.tombstones and f["tombstoned"]:
        return None
    if f["is_delete"]:
        return "delete" if f["stored"] and f["newer"] else None
    if not f["stored"]:
        return "insert"
    if not f["newer"] or not shape.updates or f["same"]:
        return None
    return "update"


def keys(shape: KeyDecisions):
    """Every key a plan can meet: stored, in the batch, or both; a delete only with
    delete_when, a tombstone only where the definition keeps them."""
    for values in itertools.product([False, True], repeat=len(FACTS)):
        f = dict(zip(FACTS, values))
        if not (f["stored"] or f["in_batch"]):
            continue
        if (f["is_delete"] and not shape.deletes) or (f["tombstoned"] and not shape.tombstones):
            continue
        yield f


def sql_value(sql: str, f: dict):
    return DB.execute(f"select {sql}", {k: int(v) for k, v in f.items()}).fetchone()[0]


@pytest.mark.parametrize("shape", SHAPES, ids=repr)
@pytest.mark.parametrize("absent_deletes", [False, True])
def test_the_guards_decide_as_the_documented_list(shape, absent_deletes):
    cases = list(keys(shape))
    assert len(cases) >= 12
    for f in cases:
        assert shape.decide(f, absent_deletes) == reference(shape, f, absent_deletes), f


@pytest.mark.parametrize("shape", SHAPES, ids=repr)
@pytest.mark.parametrize("absent_deletes", [False, True])
def test_the_change_sets_case_is_the_decision(shape, absent_deletes):
    case = shape.case_sql(TERMS, absent_deletes)
    for f in keys(shape):
        assert sql_value(case, f) == reference(shape, f, absent_deletes), (case, f)


def merge_action(clauses: list[dict], f: dict, absent: Optional[str]) -> Optional[str]:
    """What a MERGE does with the key: the first clause of its kind whose condition holds.
    A marked absent key is a source row matching its stored row, flagged `_absent` (and
    `_is_delete`, as the changes source writes it)."""
    marked = absent == "marked" and not f["in_batch"]
    if f["stored"] and (f["in_batch"] or marked):
        kind = "matched and "
    elif f["in_batch"]:
        kind = "not matched and "
    else:
        kind = "not matched by source and "
    params = {**f, "is_delete": f["is_delete"] or marked}
    for clause in clauses:
        when = clause["when"]
        if not when.startswith(kind) or (kind == "matched and " and "by source" in when):
            continue
        condition = when[len(kind) :].replace("s._absent", str(int(marked))).replace("SCOPE", "1")
        if sql_value(condition, params):
            return clause["change"]
    return None


@pytest.mark.parametrize("shape", SHAPES, ids=repr)
@pytest.mark.parametrize("absent", [None, "marked", "by_source"])
def test_the_merge_clauses_are_the_decision(shape, absent):
    clauses = shape.merge_clauses(TERMS, absent, "SCOPE")
    kinds = [c["when"].split(" and ")[0] for c in clauses]
    # Spark's order: matched, then not matched, then not matched by source
    order = ["matched", "not matched", "not matched by source"]
    assert kinds == sorted(kinds, key=order.index)
    for f in keys(shape):
        expected = reference(shape, f, absent is not None)
        assert merge_action(clauses, f, absent) == expected, (clauses, f)


@pytest.mark.parametrize("shape", SHAPES, ids=repr)
def test_a_snapshot_feeds_filter_keeps_every_change_and_drops_matched_no_ops(shape):
    terms = {**TERMS, "absent": "not :in_batch", "not_stored": "not :stored"}
    kept = shape.changes_filter(terms)
    dropped = 0
    for f in keys(shape):
        action = reference(shape, f, True)
        keeps = bool(sql_value(kept, f))
        if action is not None:
            assert keeps, (kept, f)
        elif f["stored"] and f["in_batch"]:
            assert not keeps, (kept, f)
            dropped += 1
    assert dropped > 0


def test_the_rendered_forms_name_each_fact_as_the_applier_does():
    shape = KeyDecisions(deletes=True, updates=True, tombstones=True)
    merge_terms = {
        "is_delete": "s._is_delete",
        "tombstoned": "s._tombstoned",
        "newer": "coalesce(s.`v` > t.`v`, true)",
        "same": "s.`p` <=> t.`p`",
    }
    assert [
        c["when"] for c in shape.merge_clauses(merge_terms, "by_source", "t.tenant_id = 'a'")
    ] == [
        "matched and s._is_delete and coalesce(s.`v` > t.`v`, true) and not s._tombstoned",
        "matched and not s._is_delete and coalesce(s.`v` > t.`v`, true) and not s._tombstoned"
        " and not (s.`p` <=> t.`p`)",
        "not matched and not s._is_delete and not s._tombstoned",
        "not matched by source and t.tenant_id = 'a'",
    ]
    plain = KeyDecisions(deletes=False, updates=False, tombstones=False)
    assert plain.case_sql(
        {**merge_terms, "stored": "in_target", "in_batch": "in_batch"}, False
    ) == ("case when not in_target and in_batch and not s._is_delete then 'insert' end")


def test_the_planners_rules_are_bound_to_the_attempts_definition():
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
    from dbt.adapters.jammi.mutable_table.planner_rules import planner_rules

    schema = {"id": "bigint", "n": "int", "v": "bigint", "seen": "timestamp"}
    base = MutableTableDefinition.from_config(
        "t", schema, {"primary_key": ["id"], "ttl_ms": 1000, "ttl_column": "seen"}
    ).to_dict()
    # before the attempt has its clock there is no cutoff to compare with
    assert planner_rules(base).ttl_expired is None
    rules = planner_rules({**base, "now_ms": 5000})
    assert rules.ttl_expired == "coalesce(unix_millis(cast(`seen` as timestamp)) < 4000, false)"
    assert not rules.keeps_tombstones and rules.tombstone_columns == ()
    # every name of the definition quoted once; any other name quoted when asked
    assert rules.quoted["seen"] == "`seen`" and "id" in rules.quoted
    assert rules.quoted["we`ird"] == "`we``ird`" and "we`ird" not in rules.quoted
    assert rules.batch_check_error("null_key") == "raise_error('jammi-batch-check:null_key')"
    with pytest.raises(ValueError, match="unknown batch check"):
        rules.batch_check_error("nonsense")
    assert rules.sum_type("int") == "decimal(38,0)" and rules.sum_type("double") is None
    checked = rules.stored_sum("n", "int", "s_n", "decimal(38,0)")
    assert "sums column \\'n\\', whose stored type int cannot hold the value" in checked
    deleting = MutableTableDefinition.from_config(
        "t", schema, {"primary_key": ["id"], "version_column": "v", "delete_when": "n < 0"}
    ).to_dict()
    kept = planner_rules(deleting)
    assert kept.keeps_tombstones and kept.decisions.tombstones
    assert [c[0] for c in kept.tombstone_columns] == ["id", "tenant_id", "v", "_deleted_ms"]
