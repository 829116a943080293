"""What may change in a mutable_table's definition once its table exists.

The stored rows were written under the stored definition: their key, their history
columns and their file format. A run whose definition changes one of those cannot be
applied as a change batch (a new key would overwrite or duplicate rows, a new history
mode needs columns the table lacks, a new format needs new files), so it fails here,
before anything is written, and says how to rebuild. Column additions, removals and
type changes are ``mutable.reconcile_schema``'s business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.rules.identity import check_identity_unchanged

REBUILD = (
    "rebuild the table: set config full_refresh: true on the model and run it with "
    "--full-refresh (the table is rebuilt from the model's output alone; stored rows that "
    "output does not contain are lost), or drop the table"
)


def check_definition_change(
    model_name: str,
    stored: Optional[Mapping[str, Any]],
    batch: Mapping[str, Any],
    stored_column_names: Sequence[str],
    stored_file_format: Optional[str] = None,
    requested_file_format: Optional[str] = None,
) -> None:
    """Raise if ``batch`` changes what the existing table's rows were written under.

    ``stored`` is the recorded definition (None when it cannot be read: then only what
    the table's columns show is checked). ``requested_file_format`` is the model's
    configured format (``auto`` accepts whatever format the table has)."""
    subject = f"mutable_table '{model_name}'"
    requested = str(requested_file_format or "auto").lower()
    current = str(stored_file_format or "").lower()
    if requested != "auto" and current and requested != current:
        raise JammiValidationError(
            subject,
            f"file_format is '{requested}' but the existing table is stored as '{current}'; "
            "the format of an existing table cannot change",
            f"set file_format: {current} (or auto) to keep the table, or {REBUILD}",
        )

    history = batch.get("history", "none")
    if stored is None:
        if history == "scd2" and batch["valid_to"] not in stored_column_names:
            raise JammiValidationError(
                subject,
                f"history is scd2 but the existing table has no '{batch['valid_to']}' "
                "column: it was created without history",
                f"set history back, or {REBUILD}",
            )
        return

    stored_key = list(stored.get("primary_key") or [])
    batch_key = list(batch["primary_key"])
    if stored_key and set(stored_key) != set(batch_key):
        raise JammiValidationError(
            subject,
            f"primary_key changed from {stored_key} to {batch_key} on the existing table; "
            "its rows are keyed by the stored primary key, so applying the batch by the new "
            "one would overwrite or duplicate rows",
            f"set primary_key back to {stored_key}, or {REBUILD}",
        )

    check_identity_unchanged(subject, stored, batch, REBUILD)

    stored_history = stored.get("history", "none")
    if stored_history != history:
        raise JammiValidationError(
            subject,
            f"history changed from '{stored_history}' to '{history}' on the existing table; "
            "its rows and columns were written without that history mode",
            f"set history: {stored_history} again, or {REBUILD}",
        )
    if history == "scd2":
        for option in ("valid_from", "valid_to"):
            if stored.get(option, option) != batch[option]:
                raise JammiValidationError(
                    subject,
                    f"{option} changed from '{stored.get(option, option)}' to "
                    f"'{batch[option]}' on the existing table",
                    f"set {option}: {stored.get(option, option)} again, or {REBUILD}",
                )
