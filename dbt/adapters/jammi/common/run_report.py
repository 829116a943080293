"""What a run reports to the tools around dbt: the ``adapter_response`` of its node in
``run_results.json`` (orchestrators, run histories, dbt_artifacts read it).

dbt keeps a materialization's ``main`` result and writes its response's fields as they
are, so the counts a run knows travel as fields of one response type:

- a mutable_table run: ``rows_affected`` (inserted + updated + deleted), the three
  counts, and ``table_version``, the table's version after the run (parquet/orc: the
  version directory's number; Delta: the table version; Iceberg: the snapshot id), and
  ``rows_collapsed``, the batch rows identical to another that the run took as one
  (at-least-once delivery; set when the run looked for them), and ``truncates``, the
  batch's truncate rows (``truncate_when``; set for a model that has it);
- a topic publish: ``rows_affected`` (the events published) and ``offset`` (none for
  an empty batch, which claims no offset);
- a model that consumes topics: ``events_read`` and ``offsets_read`` (per topic, the
  range ``[after, upto]`` it read), beside whatever its own materialization reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Optional

from dbt.adapters.contracts.connection import AdapterResponse


@dataclass
class JammiAdapterResponse(AdapterResponse):
    rows_inserted: Optional[int] = None
    rows_updated: Optional[int] = None
    rows_deleted: Optional[int] = None
    table_version: Optional[int] = None
    rows_collapsed: Optional[int] = None
    truncates: Optional[int] = None
    offset: Optional[int] = None
    events_read: Optional[int] = None
    offsets_read: Optional[dict[str, list[int]]] = None


def mutable_run_response(
    counts: Mapping[str, Any],
    version: Optional[int],
    collapsed: Optional[int] = None,
    truncates: Optional[int] = None,
) -> JammiAdapterResponse:
    """A mutable_table run's response from its counts (commit/merge_commit.change_counts),
    the identical batch rows it collapsed and the truncate rows its batch held."""
    message = str(counts["message"])
    if truncates:
        message += f" (TRUNCATE {int(truncates)})"
    return JammiAdapterResponse(
        _message=message,
        code="MUTABLE",
        rows_affected=int(counts["total"]),
        rows_inserted=int(counts["insert"]),
        rows_updated=int(counts["update"]),
        rows_deleted=int(counts["delete"]),
        table_version=None if version is None else int(version),
        rows_collapsed=collapsed,
        truncates=truncates,
    )


EMPTY_PUBLISH = "PUBLISH 0: an empty batch claims no offset"


def publish_response(
    rows: int, offset: Optional[int], previous: Optional[AdapterResponse] = None
) -> JammiAdapterResponse:
    """A topic publish's response (``offset`` None: an empty batch, which published
    nothing and claimed no offset); what the topic's model consumed (its post-hook ran
    before the publish, ``previous``) is kept."""
    consumed = previous if isinstance(previous, JammiAdapterResponse) else None
    return JammiAdapterResponse(
        _message=EMPTY_PUBLISH
        if offset is None
        else f"PUBLISH {int(rows)} AT OFFSET {int(offset)}",
        code="TOPIC",
        rows_affected=0 if offset is None else int(rows),
        offset=None if offset is None else int(offset),
        events_read=consumed.events_read if consumed else None,
        offsets_read=consumed.offsets_read if consumed else None,
    )


def consumer_response(
    previous: Optional[AdapterResponse], reads: Mapping[str, tuple[int, int, int]]
) -> JammiAdapterResponse:
    """``previous`` (the node's own response, kept field by field) with what it consumed:
    ``reads`` maps each topic to (after, upto, events read)."""
    kept: dict[str, Any] = {"_message": "OK"}
    if previous is not None:
        kept.update(
            {f.name: getattr(previous, f.name) for f in fields(previous) if f.init}  # type: ignore[arg-type]
        )
    kept["events_read"] = (kept.get("events_read") or 0) + sum(r[2] for r in reads.values())
    offsets = dict(kept.get("offsets_read") or {})
    offsets.update({topic: [int(after), int(upto)] for topic, (after, upto, _) in reads.items()})
    kept["offsets_read"] = offsets
    names = {f.name for f in fields(JammiAdapterResponse)}
    return JammiAdapterResponse(**{k: v for k, v in kept.items() if k in names})
