"""The pure-Python scd2 reference on the documented scenarios (docs/scd2.md)."""

from __future__ import annotations

import pytest

from tests.scd2_reference import DuplicateEffectiveTime, Event, History

K1, K2 = (None, 1), (None, 2)


def row(key, t, tier, version=None):
    return Event(key, t, {"tier": tier}, version)


def delete(key, t, version=None):
    return Event(key, t, None, version)


def intervals(history, key):
    return [(vf, vt, values) for k, vf, vt, values in history.rows() if k == key]


def test_change_noop_delete_reinsert():
    h = History(track_columns=["tier"])
    h.apply_batch([row(K1, 10, "a"), row(K2, 10, "x")])
    h.apply_batch([row(K1, 20, "b"), row(K2, 20, "x")])
    assert intervals(h, K1) == [(10, 20, ("a",)), (20, None, ("b",))]
    assert intervals(h, K2) == [(10, None, ("x",))]
    h.apply_batch([delete(K1, 30)])
    h.apply_batch([row(K1, 40, "b")])
    assert intervals(h, K1) == [(10, 20, ("a",)), (20, 30, ("b",)), (40, None, ("b",))]


def test_late_changes_split_and_prepend():
    h = History(track_columns=["tier"])
    h.apply_batch([row(K1, 10, "a"), row(K1, 30, "c")])
    h.apply_batch([row(K1, 20, "b"), row(K1, 5, "z")])
    assert intervals(h, K1) == [
        (5, 10, ("z",)),
        (10, 20, ("a",)),
        (20, 30, ("b",)),
        (30, None, ("c",)),
    ]


def test_late_delete_then_row_in_the_gap_runs_to_the_next_start():
    h = History(track_columns=["tier"])
    h.apply_batch([row(K1, 10, "a"), delete(K1, 50), row(K1, 80, "c")])
    assert intervals(h, K1) == [(10, 50, ("a",)), (80, None, ("c",))]
    h.apply_batch([delete(K1, 20), row(K1, 30, "b")])
    # the stored end at 50 is forgotten once the interval ended at 20
    assert intervals(h, K1) == [(10, 20, ("a",)), (30, 80, ("b",)), (80, None, ("c",))]


def test_duplicate_time_is_an_error_unless_versions_decide():
    with pytest.raises(DuplicateEffectiveTime):
        History(track_columns=["tier"]).apply_batch([row(K1, 10, "a"), row(K1, 10, "b")])
    h = History(track_columns=["tier"], version_column="v")
    h.apply_batch([row(K1, 10, "a", 1), row(K1, 10, "b", 2)])
    assert intervals(h, K1) == [(10, None, ("b",))]


def test_hard_deletes_respect_the_tenant_scope():
    h = History(track_columns=["tier"])
    h.apply_batch([row(("t1", 1), 10, "a")])
    h.apply_batch([row(("t2", 1), 10, "a")])
    h.apply_batch([row(("t2", 2), 20, "b")], hard_delete_time=99, scope="t2")
    assert intervals(h, ("t1", 1)) == [(10, None, ("a",))]
    assert intervals(h, ("t2", 1)) == [(10, 99, ("a",))]
