"""Where the versions of a rewrite-applied (parquet/orc) table live: run ids, version
directory names (``v0000000007_<run>``), the next version's location, and the
directories no commit points at."""

from __future__ import annotations

import re
import uuid
from typing import Optional

_VERSION_DIR = re.compile(r"^v(\d{10})_[a-z0-9]+$")


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def parse_version(location: str) -> Optional[int]:
    """The commit version encoded in a version directory's name (``v0000000007_<run>``)."""
    match = _VERSION_DIR.match(location.rstrip("/").rsplit("/", 1)[-1])
    return int(match.group(1)) if match else None


def version_dir(base: str, version: int, run_id: str) -> str:
    return f"{base.rstrip('/')}/v{version:010d}_{run_id}"


def next_location(current_location: str, run_id: str) -> str:
    """Where the next version of a table whose data lives at ``current_location`` goes:
    beside it, or, for a table adopted from another materialization (its location is
    not a version directory: adoption.py), under it as the first version (Spark does not
    read a subdirectory of an unpartitioned table's location, so its files stay as they
    are until the commit points the table at the new version)."""
    current = current_location.rstrip("/")
    version = parse_version(current)
    if version is None:
        return version_dir(current, 1, run_id)
    return version_dir(current.rsplit("/", 1)[0], version + 1, run_id)
