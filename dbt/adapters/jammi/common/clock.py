"""The adapter's one wall clock, in epoch milliseconds.

Every time the adapter records or compares is read here: commit claims and their lease
(mutable_table/commit/rewrite_commit.py), holder properties of staging tables and
leftovers, the version log, a plan's ``now_ms`` (TTL, tombstones), scd2's interval
stamps when no run time is given, and the time part of a topic id. Hosts that run dbt
are assumed to agree on it to well within a claim's lease.
"""

from __future__ import annotations

import time


def now_ms() -> int:
    """Milliseconds since the epoch, UTC."""
    return time.time_ns() // 1_000_000
