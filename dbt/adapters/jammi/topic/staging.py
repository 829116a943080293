"""Where a publish is staged before its commit, and when a staged batch is abandoned.

A publish stages its batch under a publish id ``<epoch seconds>_<12 hex>`` (parquet: a
directory ``<backing location>/_staging/<publish id>``; delta: a table
``<backing>__stage_<publish id>``), then claims an offset for it. A committed parquet
batch keeps living in its staged directory: the partition points at it.

What is provably abandoned, without timing a concurrent run:

- the claim refuses a batch staged more than ``CLAIM_MAX_AGE_S`` (12 h) ago, so no run
  will ever commit a batch older than that (it fails and publishes nothing instead);
- cleanup removes only what was staged more than ``STAGE_MAX_AGE_S`` (24 h) ago and,
  on parquet, what no partition points at.

The 12 h between the two limits covers a publisher that checked the age just before the
limit and then issued its claim, and clock differences between machines. Assumes the
clocks of the machines that run dbt against one warehouse agree to within hours.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterable, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.events.logging import AdapterLogger

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.engine import storage
from dbt.adapters.jammi.topic.topic_formats import PartitionedTopic

STAGE_MAX_AGE_S = 24 * 3600
CLAIM_MAX_AGE_S = 12 * 3600

_PUBLISH_ID = re.compile(r"(\d+)_[0-9a-f]{12}$")

logger = AdapterLogger("Jammi")

RunSql = Callable[[str], Sequence[Sequence[Any]]]


def publish_id(now_s: Optional[int] = None) -> str:
    """``<epoch seconds>_<random>``: unique per publish, and its age is readable."""
    seconds = int(time.time()) if now_s is None else now_s
    return f"{seconds}_{uuid.uuid4().hex[:12]}"


def staged_at(staging: str) -> Optional[int]:
    """Epoch seconds a staged batch (directory or stage table) was staged at, if its
    name ends with a publish id."""
    match = _PUBLISH_ID.search(staging.rstrip("/"))
    return int(match.group(1)) if match else None


def check_claimable(staging: str, now_s: int, subject: str) -> None:
    """Refuse to commit a batch staged so long ago that cleanup may remove it."""
    seconds = staged_at(staging)
    if seconds is not None and now_s - seconds > CLAIM_MAX_AGE_S:
        raise JammiValidationError(
            subject,
            f"the batch staged at {staging} is more than {CLAIM_MAX_AGE_S // 3600} h old; "
            "staged batches that old are treated as abandoned and may be cleaned up",
            "re-run the model; nothing was published",
        )


def stale_stage_tables(
    names: Iterable[str], prefix: str, now_s: int, max_age_s: int = STAGE_MAX_AGE_S
) -> list[str]:
    """Stage tables (``<prefix><epoch seconds>_<random>``) left by publishes that failed
    more than ``max_age_s`` ago; younger ones may belong to a publish in flight."""
    stale = []
    for name in names:
        if not name.startswith(prefix):
            continue
        seconds = name[len(prefix) :].split("_", 1)[0]
        if seconds.isdigit() and now_s - int(seconds) > max_age_s:
            stale.append(name)
    return stale


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def stale_staging_dirs(
    children: Iterable[str],
    referenced: Iterable[str],
    now_s: int,
    max_age_s: int = STAGE_MAX_AGE_S,
) -> list[str]:
    """Staged directories (``.../_staging/<publish id>``) that are abandoned: older than
    ``max_age_s`` and not the location of any partition (``referenced``: partition
    locations; a committed batch lives on in its staged directory)."""
    in_use = {_basename(path) for path in referenced}
    stale = []
    for path in children:
        name = _basename(path)
        seconds = staged_at(name)
        if seconds is None or _PUBLISH_ID.fullmatch(name) is None or name in in_use:
            continue
        if now_s - seconds > max_age_s:
            stale.append(path)
    return sorted(stale)


# --- the clean-up a publish runs before it stages ---------------------------------


def stage_table_prefix(backing_identifier: str) -> str:
    return f"{backing_identifier}__stage_"


def remove_stale_stage_tables(
    run_sql: RunSql, schema: str, backing_identifier: str, purge: bool = False
) -> list[str]:
    """Drop the stage tables of a delta or iceberg topic's publishes that failed more
    than a day ago (younger ones may belong to a concurrent publish still in flight,
    older ones can no longer be claimed); returns their names. ``purge``: Iceberg's
    stage tables, whose files a plain drop keeps."""
    prefix = stage_table_prefix(backing_identifier)
    rows = run_sql(f"show tables in {schema} like {sql_string_literal(prefix + '*')}")
    stale = stale_stage_tables([str(row[1]) for row in rows], prefix, int(time.time()))
    for name in stale:
        run_sql(f"drop table if exists {schema}.{name}{' purge' if purge else ''}")
    return stale


def prepare_stage_table(
    run_sql: RunSql, backing: Any, stored_as: PartitionedTopic
) -> dict[str, str]:
    """A delta or iceberg publish's stage table, after dropping the stale ones, stored
    as its topic format's ``stage_using``: parquet for delta (dropped after the commit),
    an Iceberg table for iceberg (a catalog service keeps no other kind; purged after
    the commit, as a plain drop keeps its files). ``kind``, ``target`` and ``using``, as
    ``topic_prepare_staging`` returns."""
    purge = bool(stored_as.drop_suffix)
    remove_stale_stage_tables(run_sql, backing.schema, backing.identifier, purge=purge)
    stage = f"{stage_table_prefix(backing.identifier)}{publish_id()}"
    return {"kind": "table", "target": f"{backing.schema}.{stage}", "using": stored_as.stage_using}


def remove_stale_staging_dirs(schema: str, backing_identifier: str, location: str) -> list[str]:
    """Remove the abandoned staged directories under a parquet topic's ``_staging/``
    (the partition locations are asked for only when something is old enough); returns
    them. Needs the session's file system (the embedded session)."""
    now_s = int(time.time())
    children = storage.list_children(f"{location.rstrip('/')}/_staging")
    if not stale_staging_dirs(children, (), now_s):
        return []
    referenced = storage.partition_locations(schema, backing_identifier)
    stale = stale_staging_dirs(children, referenced, now_s)
    for path in stale:
        storage.remove(path)
        logger.debug(f"topic: removed abandoned staged batch {path}")
    return stale
