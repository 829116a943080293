"""How a mutable_table run fails: ``MutableRunError`` and the message for a rejected
batch (the model, the problem, sample rows and the fix), and the phases where a test can
inject a failure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

# Names of the phases where a test can inject a failure (var 'jammi_fail_at').
FAILURE_PHASES = ("write", "before_commit", "zorder", "register", "concurrent_commit", "changelog")


def failure_sql(phase: str) -> str:
    """A statement that fails: the test hook's stop at ``phase`` (var ``jammi_fail_at``)."""
    return f"select raise_error('jammi_fail_at={phase}: injected failure')"


SAMPLE_LIMIT = 5


class MutableRunError(DbtRuntimeError):
    """A batch cannot be applied; the message names the model, the problem and samples."""


def _sample(rows: Sequence[Any], columns: Sequence[str]) -> str:
    lines = []
    for row in list(rows)[:SAMPLE_LIMIT]:
        values = list(row)
        pairs = ", ".join(f"{c}={v!r}" for c, v in zip(columns, values))
        lines.append(f"    ({pairs})")
    return "\n".join(lines)


def batch_error(
    model_name: str, kind: str, rows: Sequence[Any], columns: Sequence[str], detail: str = ""
) -> None:
    """Raise the run error for a rejected batch; ``rows`` are sample offending rows."""
    subject = f"mutable_table '{model_name}'"
    messages = {
        "null_key": (
            "the batch has rows with a NULL primary key column; nothing was written",
            "filter or fill the key columns in the model (where id is not null)",
        ),
        "null_version": (
            f"the batch has rows with a NULL version_column {detail}; nothing was written",
            "give every row a version, e.g. coalesce(updated_at, 0)",
        ),
        "duplicate_key": (
            "the batch has several rows for the same key and no version_column decides "
            "between them; nothing was written",
            "deduplicate in the model (row_number() over (partition by key ...)) or set "
            "version_column so the newest row wins",
        ),
        "duplicate_version": (
            f"the batch has several rows for the same key with the same highest "
            f"version_column {detail}; nothing was written",
            "make versions unique per key, or deduplicate in the model",
        ),
        "unique_index": (
            f"the new state would violate unique index {detail}; nothing was committed and "
            "the table is unchanged",
            "fix the duplicated values in the model's output or in the stored rows",
        ),
    }
    problem, fix = messages[kind]
    raise MutableRunError(
        f"{subject}: {problem}\n  Sample ({', '.join(columns)}):\n"
        f"{_sample(rows, columns)}\n  Fix: {fix}"
    )
