"""Registering a topic and its view so that concurrent runs agree (docs/topic.md).

Jinja cannot catch an engine error, so the steps whose outcome is "the metastore
refused because someone else got there first" live here:

- ``claim_registration``: the registration commit. The ``topics`` registry is
  partitioned by topic ``name``; a run registers a topic by staging its registry row
  in a fresh directory and attaching it with ``ALTER TABLE topics ADD PARTITION
  (name=...) LOCATION <dir>``. The metastore keeps partitions under a unique key, so of
  two runs registering one name exactly one succeeds; the registry row appears with the
  claim, atomically. The loser reads the winner's row and publishes into its backing
  table. Assumes: the metastore refuses a duplicate partition (Hive metastore: unique
  key on the partition name per table), as the parquet offset claim does.
- ``apply_view``: the view named after the model is created only when it is missing
  or its fingerprint (a table property) differs from what this run would create, so
  concurrent publishes do not all re-create it. One statement tells both (``show
  tblproperties`` of the fingerprint; "not found" when the view is missing), and
  ``topic/metadata.py`` skips even that when dbt's listing already shows the fingerprint.
  A concurrent creation of the same view is not an error; a concurrent creation of a
  *different* view is reported clearly.
- ``create_if_absent``: ``CREATE TABLE IF NOT EXISTS`` raced by another run can fail
  with "already exists" (Spark checks, then creates); that outcome is the goal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.engine.commit_conflicts import run_claim
from dbt.adapters.jammi.topic.registry_sql import (
    NAME_TAKEN,
    create_backing_sql,
    create_registry_sql,
    iceberg_claim_registration_sql,
    name_owner_sql,
    stage_registration_sql,
)
from dbt.adapters.jammi.topic.topic_formats import topic_format

RunSql = Callable[[str], Sequence[Sequence[Any]]]

VIEW_FINGERPRINT = "jammi.view_fingerprint"


def topic_storage_format(file_format: str) -> str:
    """The format a topic (or a changelog topic) whose model resolves to ``file_format``
    stores its events in: delta on Delta, iceberg on Iceberg, else parquet
    (topic/topic_formats.py)."""
    return topic_format(file_format).name


_ALREADY_EXISTS = (
    "TABLE_OR_VIEW_ALREADY_EXISTS",
    "TableAlreadyExistsException",
    "AlreadyExistsException",
    "PARTITIONS_ALREADY_EXIST",
    "already exists",
    "already exist",
)
_NOT_FOUND = ("TABLE_OR_VIEW_NOT_FOUND", "NoSuchTableException", "not found")
_NOT_PARTITIONED = (
    "NOT_A_PARTITIONED_TABLE",
    "not partitioned",
    "non-partitioned",
    "partition metadata is not stored",
)


class TopicRegistrationError(JammiValidationError):
    """A topic could not be registered or its view could not be created."""


def is_already_exists(message: str) -> bool:
    return any(marker in message for marker in _ALREADY_EXISTS)


def is_not_found(message: str) -> bool:
    return any(marker in message for marker in _NOT_FOUND)


def create_if_absent(run_sql: RunSql, create_sql: str) -> bool:
    """Run a ``CREATE ... IF NOT EXISTS``; True if this call created the object.

    Two runs creating the same object at once can both pass Spark's existence check,
    and the later one is refused by the metastore: the object exists either way."""
    try:
        run_sql(create_sql)
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        if not is_already_exists(str(exc)):
            raise
        return False
    return True


# --- registration -------------------------------------------------------------


def claim_registration_sql(registry: str, name: str, staged_location: str) -> str:
    return (
        f"alter table {registry} add partition (name={sql_string_literal(name)}) "
        f"location {sql_string_literal(staged_location)}"
    )


def claim_registration(
    run_sql: RunSql, registry: str, name: str, staged_location: str, subject: str
) -> bool:
    """Attach the staged registry row of topic ``name``; False if another run
    registered the name first (then nothing of this run's row is visible)."""
    try:
        run_sql(claim_registration_sql(registry, name, staged_location))
    except Exception as exc:  # noqa: BLE001
        message = str(exc)
        if is_already_exists(message):
            return False
        if any(marker in message for marker in _NOT_PARTITIONED):
            raise TopicRegistrationError(
                subject,
                f"the registry {registry} was created by an earlier dbt-jammi without the "
                "partitioning by name that makes registration race-free",
                f"migrate it as docs/topic.md ('Registration') shows: rename it to "
                f"{registry}_v0, create the partitioned registry, copy the rows back; "
                "nothing was registered",
            ) from exc
        raise
    return True


def claim_iceberg_registration(
    run_sql: RunSql, registry: str, candidate: Mapping[str, Any], attempts: int = 20
) -> bool:
    """Insert the registry row of ``candidate`` into an Iceberg registry; False if a row
    of its name exists (another run registered it first). A commit refused because
    another registration committed since this one read the registry is tried again:
    the next attempt either commits or finds the name taken."""
    statement = iceberg_claim_registration_sql(registry, candidate, candidate["relation_name"])
    won, last = run_claim(run_sql, statement, NAME_TAKEN, attempts)
    if won is not None:
        return won
    raise TopicRegistrationError(
        f"topic '{candidate['relation_name']}'",
        f"the registry {registry} kept changing while this run registered "
        f"{candidate['name']} ({last})",
        "re-run the model; nothing was registered",
    )


def check_unchanged(topic: Mapping[str, Any], definition: Mapping[str, Any], subject: str) -> None:
    """A registered topic's name and columns are permanent: the model must keep them."""
    if topic["name"] != definition["name"]:
        raise TopicRegistrationError(
            subject,
            f"topic_name is '{definition['name']}' but this model's topic is registered "
            f"as '{topic['name']}'",
            f"topic names are permanent; restore topic_name: {topic['name']}",
        )
    if json.dumps(topic["columns"]) != json.dumps(definition["columns"]):
        raise TopicRegistrationError(
            subject,
            f"the model's columns {json.dumps(definition['columns'])} differ from the "
            f"topic's registered schema {json.dumps(topic['columns'])}",
            "keep the published schema, or publish to a new topic_name",
        )


def name_taken(subject: str, name: str, owner: str, schema: str) -> TopicRegistrationError:
    return TopicRegistrationError(
        subject,
        f"topic_name '{name}' is already used by model '{owner}' in schema {schema}",
        "set a different topic_name",
    )


def check_catalog_service_format(
    stored_format: str, registry_format: str, subject: str, catalog: str
) -> None:
    """On a catalog service (an Iceberg registry) a topic's events are Iceberg too."""
    if registry_format == "iceberg" and stored_format != "iceberg":
        raise TopicRegistrationError(
            subject,
            f"file_format '{stored_format}' on a session whose default catalog is "
            f"'{catalog}': an Iceberg catalog service keeps Iceberg tables only "
            '(docs/formats.md, "An Iceberg catalog service"). Nothing of the topic was written.',
            "set file_format: iceberg or auto (or leave it unset)",
        )


def check_name_free(
    run_sql: RunSql,
    registry: str,
    name: str,
    subject: str,
    schema: str,
    registry_format: str = "parquet",
) -> None:
    """Before a first registration: create the registry if absent, and refuse a name
    another model's topic holds."""
    create_if_absent(run_sql, create_registry_sql(registry, registry_format))
    owner = run_sql(name_owner_sql(registry, name))
    if owner:
        raise name_taken(subject, name, str(owner[0][0]), schema)


def register_first(
    run_sql: RunSql,
    registry: str,
    backing: str,
    candidate: Mapping[str, Any],
    staged: Optional[str],
    subject: str,
) -> bool:
    """A first registration, race-free: one backing table per topic name whatever the
    timing. Creates this run's own backing table (a fresh id: nobody else uses the
    name), then claims the name: with its registry row staged in ``staged`` (a parquet
    registry), or by the registry's own MERGE (an Iceberg one: ``staged`` is None).
    True if this run won; False if a concurrent run did, after this run's own backing
    table (empty, never registered) is dropped. A run killed before the claim leaves an
    unregistered empty table and a staged row no reader sees."""
    run_sql(create_backing_sql(backing, candidate))
    if staged is None:
        won = claim_iceberg_registration(run_sql, registry, candidate)
    else:
        run_sql(stage_registration_sql(staged, candidate, candidate["relation_name"]))
        won = claim_registration(run_sql, registry, candidate["name"], staged, subject)
    if won:
        return True
    run_sql(f"drop table if exists {backing}{topic_format(candidate['file_format']).drop_suffix}")
    return False


# --- the view named after the model ---------------------------------------------


def view_fingerprint(view_select_sql: str) -> str:
    """What the view selects, whitespace-insensitive, as a short hash."""
    normalized = " ".join(view_select_sql.split())
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()[:32]


def fetch_view_state(run_sql: RunSql, schema: str, identifier: str) -> tuple[bool, str]:
    """(exists, fingerprint) in one statement: fingerprint is '' when the relation is
    not ours (Spark answers a missing property with a message in the value column)."""
    try:
        rows = run_sql(
            f"show tblproperties {schema}.{identifier} ({sql_string_literal(VIEW_FINGERPRINT)})"
        )
    except Exception as exc:  # noqa: BLE001 - engine errors arrive untyped
        if is_not_found(str(exc)):
            return False, ""
        raise
    for row in rows:
        if len(row) > 1 and row[0] == VIEW_FINGERPRINT:
            return True, str(row[1])
    return True, ""


def apply_view(
    run_sql: RunSql,
    schema: str,
    identifier: str,
    create_sql: str,
    replace_sql: str,
    fingerprint: str,
    subject: str,
    attempts: int = 3,
) -> str:
    """Create the view if missing, replace it if different; 'kept', 'created' or
    'replaced'. ``create_sql`` is a plain ``CREATE VIEW`` (refused if the view exists),
    ``replace_sql`` a ``CREATE OR REPLACE VIEW`` (Spark drops, then creates); both carry
    ``fingerprint``. A run that meets another run's concurrent create or replace looks
    again: if the view is now right, there is nothing left to do."""
    error: Exception = RuntimeError("no attempt made")
    for _ in range(attempts):
        exists, current = fetch_view_state(run_sql, schema, identifier)
        if exists and current == fingerprint:
            return "kept"
        try:
            run_sql(replace_sql if exists else create_sql)
            return "replaced" if exists else "created"
        except Exception as exc:  # noqa: BLE001
            if not (is_already_exists(str(exc)) or is_not_found(str(exc))):
                raise
            error = exc
    raise TopicRegistrationError(
        subject,
        f"the view {schema}.{identifier} kept being changed by another run while this run "
        f"created it ({str(error).splitlines()[0]})",
        "make sure only one version of this model runs at a time, then re-run it; the "
        "view is re-created when it is wrong, and nothing was published",
    ) from error
