"""When a staged topic batch is provably abandoned, and the claim that makes it so."""

from __future__ import annotations

import time

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.topic import publish
from dbt.adapters.jammi.topic.publish import claim_offset
from dbt.adapters.jammi.topic.staging import (
    CLAIM_MAX_AGE_S,
    STAGE_MAX_AGE_S,
    check_claimable,
    publish_id,
    remove_stale_stage_tables,
    staged_at,
    stale_staging_dirs,
)

NOW = 1_800_000_000
BASE = "file:/w/s.db/__topic_x/_staging"


def test_publish_id_records_when_it_was_staged():
    assert staged_at(f"{BASE}/{publish_id(NOW)}") == NOW
    assert staged_at(f"s.__topic_x__stage_{publish_id(NOW)}") == NOW
    assert staged_at("/stage") is None


def test_only_old_unreferenced_staged_dirs_are_stale():
    old = NOW - STAGE_MAX_AGE_S - 1
    children = [
        f"{BASE}/{old}_aaaaaaaaaaaa",  # abandoned
        f"{BASE}/{old}_bbbbbbbbbbbb",  # committed: a partition points at it
        f"{BASE}/{NOW - 60}_cccccccccccc",  # young: maybe a publish in flight
        f"{BASE}/not_a_publish",  # not ours
    ]
    referenced = [f"file:/w/s.db/__topic_x/_staging/{old}_bbbbbbbbbbbb"]
    assert stale_staging_dirs(children, referenced, NOW) == [f"{BASE}/{old}_aaaaaaaaaaaa"]


def test_stale_needs_to_be_older_than_any_claimable_batch():
    assert STAGE_MAX_AGE_S >= 2 * CLAIM_MAX_AGE_S


def test_claim_refuses_a_batch_staged_too_long_ago():
    check_claimable(f"{BASE}/{NOW - CLAIM_MAX_AGE_S}_aaaaaaaaaaaa", NOW, "t")
    with pytest.raises(JammiValidationError, match="re-run the model; nothing was published"):
        check_claimable(f"{BASE}/{NOW - CLAIM_MAX_AGE_S - 1}_aaaaaaaaaaaa", NOW, "t")


def test_claim_offset_does_not_commit_an_abandoned_batch(monkeypatch):
    monkeypatch.setattr(publish.time, "time", lambda: float(NOW))
    statements = []

    def run_sql(sql):
        statements.append(sql)
        return []

    stale = f"{BASE}/{NOW - STAGE_MAX_AGE_S}_aaaaaaaaaaaa"
    with pytest.raises(JammiValidationError, match="more than 12 h old"):
        claim_offset(run_sql, "s.__topic_x", stale, "parquet")
    assert not any(s.startswith("alter table") for s in statements)


def test_a_delta_publish_drops_only_stage_tables_failed_over_a_day_ago():
    now_s = int(time.time())
    old, young = f"{now_s - STAGE_MAX_AGE_S - 60}_0123456789ab", f"{now_s - 60}_0123456789ab"
    statements = []

    def run(sql):
        statements.append(sql)
        if sql.startswith("show tables"):
            return [
                ("s", f"__topic_x__stage_{old}", False),
                ("s", f"__topic_x__stage_{young}", False),
            ]
        return []

    assert remove_stale_stage_tables(run, "s", "__topic_x") == [f"__topic_x__stage_{old}"]
    assert statements == [
        "show tables in s like '__topic_x__stage_*'",
        f"drop table if exists s.__topic_x__stage_{old}",
    ]
