"""How a publish numbers its rows (``_row_idx``): in one task, or in parallel.

With ``row_idx: contiguous`` (the default), ``_row_idx`` is the 0-based, contiguous
position of a row in the model's output, and the batch is evaluated once (it may not be
deterministic). ``get_stage_topic_batch_sql`` renders three plans that give those
numbers:

- ``one_task``: the batch coalesced into one task (no shuffle; its partitions read in
  order) and numbered there by ``row_number() over (order by
  monotonically_increasing_id())``. One stage after the model's own.
- ``window``: the same window, the batch gathered into one partition by a shuffle.
- ``parallel``: each row is numbered where it is produced, plus the rows of the
  partitions before its own. Five stages (the batch into a shuffle both branches read,
  the per-partition counts, their running sum, its broadcast, the write); it needs
  exchange reuse, or each branch would evaluate the batch again (without it: ``window``).

For a small batch the parallel plan's stages cost more than one task saves. Measured on
2 cores (``local[2]``, parquet, the median of five): 10 rows 0.24-0.44 s in one task
against 0.6-0.75 s in parallel; 100,000 rows 0.30-0.43 s against 0.5-0.8 s; 300,000 rows
0.44 s against 0.54 s; 1,000,000 rows 1.9 s against 0.9 s. More cores move the break-even
down, hence the conservative limit. The size is Spark's own estimate of the model's
query (``explain cost``: no job runs): a batch estimated at most ``SMALL_BATCH_ROWS``
rows, or without a row count at most ``SMALL_BATCH_BYTES``, is numbered in one task. An
estimate that is too high only costs the parallel plan; one that is too low (a
generator such as ``explode`` over a small input) costs one task's time, never a wrong
number.

With ``row_idx: ordered`` the publish asks nothing: ``_row_idx`` is Spark's
``monotonically_increasing_id()`` (the task's number in the high 31 bits, the row's
position in its task in the low 33), computed in the batch's own stage. Unique and
increasing in the model's output order, not contiguous; nothing is gathered or
counted before the write (measured: the staging statement 1.14x an INSERT of the same
10,000,000 rows, 1.54x at 1,000,000; docs/performance.md, issue 51).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Optional

SMALL_BATCH_ROWS = 100_000
SMALL_BATCH_BYTES = 4 * 1024 * 1024

_STATISTICS = re.compile(
    r"Statistics\(sizeInBytes=([0-9.E+]+)\s*([KMGTPE]i)?B(?:, rowCount=([0-9.E+]+))?"
)
_UNITS = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def root_statistics(plan_rows: Iterable[Sequence[Any]]) -> Optional[tuple[float, Optional[float]]]:
    """(size in bytes, row count or None) of the root of the optimized plan in the
    output of ``explain cost``; None when the output has no statistics."""
    text = "\n".join(str(row[0]) for row in plan_rows if row)
    start = text.find("== Optimized Logical Plan ==")
    match = _STATISTICS.search(text, max(start, 0))
    if match is None:
        return None
    size = float(match.group(1)) * _UNITS[match.group(2)]
    rows = float(match.group(3)) if match.group(3) is not None else None
    return size, rows


def is_small_batch(
    plan_rows: Iterable[Sequence[Any]],
    max_rows: Optional[int] = None,
    max_bytes: Optional[int] = None,
) -> bool:
    """Whether the estimate is within the limits (default: the module's, read at the
    call, so a test can lower them)."""
    max_rows = SMALL_BATCH_ROWS if max_rows is None else max_rows
    max_bytes = SMALL_BATCH_BYTES if max_bytes is None else max_bytes
    statistics = root_statistics(plan_rows)
    if statistics is None:
        return False
    size, rows = statistics
    if rows is not None:
        return rows <= max_rows
    return size <= max_bytes
