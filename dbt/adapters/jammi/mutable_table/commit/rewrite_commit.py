"""The rewrite applier's commit (parquet, orc): a compare-and-swap on the table's location.

A run plans from the version the table points at (``planned_location``, version N) and
writes the complete version N+1 to a fresh directory. ``commit_version`` then moves the
table there so that, of all runs that planned from N, at most one ever commits:

1. **Claim N+1.** Create the view ``<table>__jammi_claim_v<N+1>_<attempt>``. The Hive
   metastore refuses to create a relation that exists (its unique index on the table
   name decides two concurrent creates), so exactly one run holds the claim on N+1.
2. **Check.** With the claim held, read the table's location. Only a holder of the claim
   on N+1 may move the table away from N, so if it still points at N nobody can move it
   before our own step 3; if it points anywhere else, another run committed first:
   nothing is committed and the run fails with a message saying to re-run.
3. **Commit** with one ``ALTER TABLE ... SET LOCATION`` and drop the claim. A claim left
   behind after a commit is harmless: whoever claims that version later fails its check.

A run that crashes holding a claim must not block the table forever. A claim is
abandoned (``ownership.abandoned``) when its holder was an embedded session on this host
whose process is gone, or when it is older than its lease (``claim_lease_ms()``: 120 s,
or ``JAMMI_CLAIM_LEASE_SECONDS``); the next run then
claims attempt ``k+1`` of the same version instead of removing the old claim (removing it
would race with a third run). A live holder gives up instead of committing once it has
held its claim for ``CLAIM_HOLD_LIMIT_MS``, so a holder is never still committing when
its claim is taken over. Assumed of the metastore: creating an existing relation fails,
and the clocks of the hosts that run dbt agree to well within the lease.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.clock import now_ms
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.mutable_table import run_errors, table_properties, version_locations
from dbt.adapters.jammi.mutable_table.commit import ownership

CLAIM_LEASE_MS = 120_000
CLAIM_HOLD_LIMIT_MS = 30_000
# An operator's setting (docs/connecting.md): how long a claim left by an ended run
# blocks the table. It must outlast the hold limit by a margin, so that a live holder has
# given up before its claim can be taken over.
LEASE_ENV = "JAMMI_CLAIM_LEASE_SECONDS"
MIN_LEASE_MS = CLAIM_HOLD_LIMIT_MS + 10_000
MAX_CLAIM_ATTEMPTS = 5
CLAIM_MARKER = "__jammi_claim_v"
_ALREADY_EXISTS = ("TABLE_OR_VIEW_ALREADY_EXISTS", "AlreadyExistsException", "already exists")
_NOT_FOUND = ("TABLE_OR_VIEW_NOT_FOUND", "NoSuchTableException", "not found")

RunSql = Callable[[str], Sequence[Sequence[Any]]]


def already_exists(message: str) -> bool:
    return any(marker in message for marker in _ALREADY_EXISTS)


def not_found(message: str) -> bool:
    return any(marker in message for marker in _NOT_FOUND)


def claim_identifier(table_identifier: str, version: int, attempt: int) -> str:
    return f"{table_identifier}{CLAIM_MARKER}{version:010d}_{attempt}"


def claim_version(table_identifier: str, name: str) -> Optional[int]:
    """The version a claim view of ``table_identifier`` is for, else None."""
    prefix = f"{table_identifier}{CLAIM_MARKER}"
    if not name.startswith(prefix):
        return None
    digits = name[len(prefix) :].split("_", 1)[0]
    return int(digits) if digits.isdigit() else None


def create_claim_sql(claim: str, holder: ownership.Holder, claimed_ms: int) -> str:
    properties = ", ".join(
        f"'{key}' = '{value}'"
        for key, value in ownership.holder_properties(holder, claimed_ms).items()
    )
    return f"create view {claim} tblproperties ({properties}) as select 1 as claim"


def claim_lease_ms() -> int:
    """The lease of a commit claim: ``JAMMI_CLAIM_LEASE_SECONDS`` when set, else 120 s."""
    value = os.environ.get(LEASE_ENV, "").strip()
    if not value:
        return CLAIM_LEASE_MS
    if not value.isdigit() or int(value) * 1000 < MIN_LEASE_MS:
        raise run_errors.MutableRunError(
            f"{LEASE_ENV}={value!r} is not a lease: set a whole number of seconds of at "
            f"least {MIN_LEASE_MS // 1000} (a committing run gives up after "
            f"{CLAIM_HOLD_LIMIT_MS // 1000} s), or unset it for the default of "
            f"{CLAIM_LEASE_MS // 1000} s"
        )
    return int(value) * 1000


def _properties(rows: Sequence[Sequence[Any]]) -> dict[str, str]:
    return {str(row[0]): str(row[1]) for row in rows if len(row) >= 2}


class CommitConflict(run_errors.MutableRunError):
    """Another run holds, or has used, the successor of the planned version."""

    replan_helps = True  # a plan on top of the other run's version may commit


class ClaimLeaseHeld(CommitConflict):
    """The successor is claimed by a run that has ended, for the rest of the claim's
    lease: planning again a moment later meets the same claim."""

    replan_helps = False


def _conflict(model_name: str, detail: str) -> CommitConflict:
    return CommitConflict(
        f"mutable_table '{model_name}': {detail}. Nothing was committed and the table keeps "
        "the other run's version; re-run to apply this batch on top of it."
    )


def _claim_held(
    model_name: str, table: str, version: int, properties: dict[str, str]
) -> CommitConflict:
    """The conflict with a claim that is not abandoned. Its holder may be committing
    now; or it ran on this host and has ended (its Thrift server died under it, say),
    and then the message says so and when the claim's lease lets a run take it over."""
    created = properties.get(ownership.PROP_CREATED_MS, "")
    if not (ownership.holder_ended(properties) and created.isdigit()):
        return _conflict(model_name, f"another run is committing version {version} of {table} now")
    lease = claim_lease_ms()
    expires = time.strftime("%H:%M:%S UTC", time.gmtime((int(created) + lease) / 1000 + 1))
    return ClaimLeaseHeld(
        f"mutable_table '{model_name}': version {version} of {table} is claimed by a run "
        f"that has ended ({properties.get(ownership.PROP_HOLDER)}); a commit statement it "
        "sent may still be pending on the server, so its claim is taken over only when "
        f"its lease of {lease // 1000} s has passed, at {expires}. Nothing was "
        "committed; re-run after that time to apply this batch."
    )


def _claim(
    run_sql: RunSql,
    model_name: str,
    schema: str,
    identifier: str,
    version: int,
    holder: ownership.Holder,
    clock: Callable[[], int],
) -> tuple[list[str], int]:
    """Hold a claim on ``version``: returns the claims this run made or took over (its
    own last) and when it took its own; raises ``CommitConflict`` when a live run holds
    it."""
    taken_over: list[str] = []
    attempt = 0
    for _ in range(2 * MAX_CLAIM_ATTEMPTS):
        if attempt >= MAX_CLAIM_ATTEMPTS:
            break
        claim = f"{schema}.{claim_identifier(identifier, version, attempt)}"
        claimed_ms = clock()
        try:
            run_sql(create_claim_sql(claim, holder, claimed_ms))
            return [*taken_over, claim], claimed_ms
        except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
            if not_found(str(exc)):
                # Spark's CREATE VIEW saw the claim exist, then read it after its holder
                # dropped it: nobody holds it now, try the same attempt again
                continue
            if not already_exists(str(exc)):
                raise
        try:
            properties = _properties(run_sql(f"show tblproperties {claim}"))
        except Exception as exc:  # noqa: BLE001
            if not_found(str(exc)):
                continue  # its holder dropped it meanwhile: try the same attempt again
            raise
        if not ownership.abandoned(properties, clock(), claim_lease_ms()):
            raise _claim_held(model_name, f"{schema}.{identifier}", version, properties)
        taken_over.append(claim)
        attempt += 1
    raise _conflict(model_name, f"could not claim version {version} of {schema}.{identifier}")


def commit_version(
    run_sql: RunSql,
    *,
    model_name: str,
    schema: str,
    identifier: str,
    planned_location: str,
    new_location: str,
    holder: ownership.Holder,
    clock: Callable[[], int] = now_ms,
) -> None:
    """Point ``schema.identifier`` at ``new_location`` if and only if no other run has
    moved it away from ``planned_location``; raise ``CommitConflict`` otherwise.

    ``run_sql`` executes one statement and returns its rows, raising on failure."""
    table = f"{schema}.{identifier}"
    version = version_locations.parse_version(new_location)
    if version is None:
        raise run_errors.MutableRunError(f"{new_location!r} is not a version directory")
    claims, claimed_ms = _claim(run_sql, model_name, schema, identifier, version, holder, clock)
    try:
        current = table_properties.describe_location(run_sql(f"describe table extended {table}"))
        if (current or "").rstrip("/") != planned_location.rstrip("/"):
            raise _conflict(
                model_name,
                "another run committed a new version while this run was planning "
                f"(planned from {planned_location}, the table now points at {current})",
            )
        if clock() - claimed_ms > CLAIM_HOLD_LIMIT_MS:
            raise _conflict(
                model_name,
                f"the claim on version {version} was held longer than "
                f"{CLAIM_HOLD_LIMIT_MS // 1000} s before the commit, so another run may "
                "take it over",
            )
        run_sql(f"alter table {table} set location {sql_string_literal(new_location)}")
    finally:
        for claim in reversed(claims):
            try:
                run_sql(f"drop view if exists {claim}")
            except Exception:  # noqa: BLE001 - a leftover claim is harmless (see above)
                pass
