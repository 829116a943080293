"""Config ``truncate_when``: a row of the batch that empties the run's scope at its
version, as a source database's ``TRUNCATE`` does (docs/mutable_table.md#truncates).

A truncate row needs no key. Its version ``T`` (the newest, when the batch holds
several) ends every stored key of the run's scope whose version is older than ``T``:
the run's batch becomes

- the batch's rows newer than ``T`` (the rows at or before ``T`` are from before the
  truncate, and change nothing), with the truncate rows themselves left out;
- one delete per key the truncate ends, at ``T``: the stored keys of the scope whose
  version is older, and the keys of the batch's rows it drops. Each is the truncate row
  with the key's values, flagged (``TRUNCATED_FLAG``) so the planner takes it as a
  delete whatever ``delete_when`` says.

Those deletes are ordinary deletes to every planner, applier and check: a batch row
newer than ``T`` wins over its key's delete, a stored key newer than ``T`` is kept, and
each deleted key keeps a tombstone (rules/tombstones.py), so a late change from before
the truncate stays ignored. The stored rows are read inside the statement that applies
the batch, so a re-plan after a concurrent commit truncates what that commit left.

With ``history: scd2`` a truncate is a point in each key's history instead: every
truncate of the batch becomes a delete of every key of the scope (and of the batch) at
the truncate's effective time, and the interval planner closes each interval open then;
the batch's other rows all stay (a row from before the truncate is history before it),
and nothing is deleted from the history.

The run counts the batch's truncate rows first (one query over the batch); a batch
without any is read as it is, with the flag false. The count is the run report's
``truncates`` (common/run_report.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.predicates import validate_predicate
from dbt.adapters.jammi.common.validation import quote_identifier
from dbt.adapters.jammi.mutable_table.rules.version_sql import (
    stored_scope_sql,
    version_is_null_sql,
    version_sql,
)

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# The definition options this rule owns (registered in rules/registry.py).
OPTIONS = ("truncate_when",)

# The batch column that marks a truncate's delete of one key (read by change_set.sql's
# mutable_stamped_batch_sql).
TRUNCATED_FLAG = "_jammi_truncated"


def definition_fields(
    opts: Mapping[str, Any], draft: MutableTableDefinition, subject: str
) -> dict[str, Any]:
    """The definition's ``truncate_when``, refused where a truncate cannot mean what it
    says."""
    predicate = opts.get("truncate_when")
    if predicate is None:
        return {"truncate_when": None}
    predicate = validate_predicate(predicate, subject, "truncate_when")
    if not draft.version_column:
        raise JammiValidationError(
            subject,
            "'truncate_when' needs a version_column: a truncate empties the table at its "
            "version, and only a version tells which changes came before it and which "
            "after",
            "set version_column (e.g. the feed's sequence number or commit time)",
        )
    if opts.get("merge_functions"):
        raise JammiValidationError(
            subject,
            "'truncate_when' cannot be combined with merge_functions: a merge function "
            "combines a key's rows without tombstones, so a late change from before the "
            "truncate could not be kept out",
            "remove truncate_when or merge_functions",
        )
    return {"truncate_when": predicate}


def applied_batch(
    definition: Mapping[str, Any],
    source: str,
    batch_columns: Sequence[Sequence[str]],
    target: Optional[str],
    tenant: Optional[str],
    run_sql: Callable[[str], Sequence[Sequence[Any]]],
) -> tuple[str, int]:
    """The batch as the run reads it, with its truncates applied, and how many truncate
    rows it held (``run_sql`` counts them: the one query this rule adds to a run)."""
    count = int(run_sql(truncate_count_sql(definition, source))[0][0] or 0)
    if not count:
        return unflagged_batch_sql(source), 0
    return truncated_batch_sql(definition, source, batch_columns, target, tenant), count


def truncate_count_sql(definition: Mapping[str, Any], source: str) -> str:
    """How many rows of the batch are truncates."""
    return (
        f"select count(*) from {source} as batch "
        f"where coalesce(({definition['truncate_when']}), false)"
    )


def unflagged_batch_sql(source: str) -> str:
    """A batch without truncate rows, as the planner reads a truncate_when model's
    batch."""
    return f"(select *, false as {TRUNCATED_FLAG} from {source} as batch)"


def truncated_batch_sql(
    definition: Mapping[str, Any],
    source: str,
    batch_columns: Sequence[Sequence[str]],
    target: Optional[str],
    tenant: Optional[str],
) -> str:
    """The batch with its truncates applied (see the module's doc): ``source`` is the
    parenthesized batch, ``batch_columns`` its (name, type) pairs, ``target`` the
    stored table (None on a first run), ``tenant`` the bound tenant."""
    names = [str(name) for name, _ in batch_columns]
    keys = [str(k) for k in definition["primary_key"]]
    tenant_from = definition.get("tenant_from") if tenant is None else None
    key_names = keys + ([str(tenant_from)] if tenant_from else [])
    rule = _ScopeRule.of(definition)
    kept = ", ".join(f"b.{quote_identifier(n)}" for n in names)
    ended = ", ".join(
        f"k.{quote_identifier(n)}" if n in key_names else f"tr.{quote_identifier(n)}" for n in names
    )
    ended_keys = [
        f"select {', '.join(f'b.{quote_identifier(k)}' for k in key_names)} "
        f"from _jammi_batch as b where not b._jammi_truncates and {rule.ended_batch_row}"
    ]
    if target is not None:
        stored_keys = [f"stored.{quote_identifier(k)}" for k in keys]
        if tenant_from:
            stored_keys.append(f"stored.tenant_id as {quote_identifier(str(tenant_from))}")
        ended_keys.append(
            f"select {', '.join(stored_keys)} from {target} as stored "
            f"where {stored_scope_sql(definition, tenant)} and {rule.ended_stored_row}"
        )
    return (
        "(with _jammi_batch as (\n"
        f"  select *, coalesce(({definition['truncate_when']}), false) as _jammi_truncates "
        f"from {source} as batch\n"
        "), _jammi_truncate as (\n"
        "  select * from (select *, row_number() over "
        f"(order by {version_sql(definition, '')} desc) as _jammi_rn "
        f"from _jammi_batch where _jammi_truncates and not ({version_is_null_sql(definition)})) "
        f"where {rule.truncates_kept}\n"
        ")\n"
        f"select {kept}, false as {TRUNCATED_FLAG} from _jammi_batch as b\n"
        f"where not (b._jammi_truncates and not ({version_is_null_sql(definition, 'b.')}))\n"
        f"  and {rule.kept_batch_row}\n"
        "union all\n"
        f"select {ended}, true as {TRUNCATED_FLAG}\n"
        f"from (select distinct * from ({' union all '.join(ended_keys)}) as ended) as k\n"
        "cross join _jammi_truncate as tr\n"
        ")"
    )


@dataclass(frozen=True)
class _ScopeRule:
    """Which rows a truncate ends, by history mode (conditions over the batch row ``b``,
    the stored row ``stored`` and the truncate rows).

    - history none: the newest truncate decides; the batch's rows at or before it are
      dropped (their keys end with it), and the stored keys older than it end;
    - history scd2: each truncate is a delete of every key at its effective time, which
      the interval planner places on each key's timeline; every batch row is kept (a row
      from before a truncate is history before it).
    """

    truncates_kept: str
    kept_batch_row: str
    ended_batch_row: str
    ended_stored_row: str

    @classmethod
    def of(cls, definition: Mapping[str, Any]) -> _ScopeRule:
        if definition.get("history") == "scd2":
            return cls("true", "true", "true", "true")
        newest = (
            f"(select max({version_sql(definition, 'b.')}) from _jammi_batch as b "
            "where b._jammi_truncates)"
        )
        return cls(
            truncates_kept="_jammi_rn = 1",
            kept_batch_row=f"not coalesce({version_sql(definition, 'b.')} <= {newest}, false)",
            ended_batch_row=f"{version_sql(definition, 'b.')} <= {newest}",
            ended_stored_row=f"coalesce({version_sql(definition, 'stored.')} < {newest}, true)",
        )
