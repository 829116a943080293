"""Kept versions of rewrite-applied (parquet/orc) mutable tables: which version
directories stay readable, which a committing run removes, and the version log that
tells them apart without a file system client (docs/versions.md).

Every version a run writes gets one log row, written *before* the version's data, into
``<table base>/_jammi_versions/<version directory name>`` (a directory Spark never reads
as part of the table: names starting with ``_`` are hidden). The row says which version
the run planned from (``parent``), when it was written, the run's insert/update/delete
counts, its dbt invocation id and its holder. From the table's current location the
committed versions are the chain of ``parent`` links: a directory off that chain was
never committed (a run that lost its commit, or crashed).

After a commit the run keeps the chain's newest ``versions_kept`` versions and removes
older ones. Directories off the chain are removed once their runs are provably gone
(``ownership.abandoned``), or, when the embedded session lists the directories itself,
as the commit protocol always allowed: a committed run removes every other directory,
a run that commits nothing only those older than the current version.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.mutable_table import run_errors, version_locations
from dbt.adapters.jammi.mutable_table.commit import ownership

# The current version plus the two before it: enough to undo the last batch (or the
# last two) while a table costs at most three full copies of its rows on disk.
DEFAULT_VERSIONS_KEPT = 3
MAX_VERSIONS_KEPT = 1000
LOG_DIR = "_jammi_versions"
# A leftover of a remote run whose end this host cannot observe is removed after this.
LEFTOVER_MAX_AGE_MS = 24 * 3600 * 1000

LOG_COLUMNS = (
    ("version", "bigint"),
    ("location", "string"),
    ("parent", "string"),
    ("written_ms", "bigint"),
    ("inserts", "bigint"),
    ("updates", "bigint"),
    ("deletes", "bigint"),
    ("invocation_id", "string"),
    ("kind", "string"),
    ("holder", "string"),
)


def validate_versions_kept(value: Any, subject: str) -> int:
    """``versions_kept``: a whole number from 1 (only the current version) up."""
    if value is None:
        return DEFAULT_VERSIONS_KEPT
    if isinstance(value, bool) or not isinstance(value, int):
        raise JammiValidationError(
            subject,
            f"'versions_kept' must be a whole number, got {value!r}",
            f"set versions_kept to how many committed versions stay readable, e.g. "
            f"versions_kept: {DEFAULT_VERSIONS_KEPT}",
        )
    if not 1 <= value <= MAX_VERSIONS_KEPT:
        raise JammiValidationError(
            subject,
            f"'versions_kept' is {value}; it counts the current version, so it must be "
            f"between 1 and {MAX_VERSIONS_KEPT}",
            "set versions_kept: 1 to keep only the current version, or a larger number "
            "to keep versions to read and roll back to",
        )
    return value


def _base(location: str) -> str:
    return location.rstrip("/").rsplit("/", 1)[0]


def _name(location: str) -> str:
    return location.rstrip("/").rsplit("/", 1)[-1]


def log_location(version_location: str) -> str:
    """Where the log row of the version at ``version_location`` is written."""
    return f"{_base(version_location)}/{LOG_DIR}/{_name(version_location)}"


def log_glob(base: str) -> str:
    """A path pattern Spark expands to every log row of the table at ``base``."""
    return f"{base.rstrip('/')}/{LOG_DIR}/v*"


@dataclass(frozen=True)
class VersionRecord:
    version: int
    location: str
    parent: Optional[str]
    written_ms: int
    inserts: int
    updates: int
    deletes: int
    invocation_id: str
    kind: str
    holder: str

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name, _ in LOG_COLUMNS}


def write_log_sql(
    location: str,
    parent: Optional[str],
    written_ms: int,
    counts: Mapping[str, Any],
    invocation_id: str,
    kind: str,
    holder: str,
) -> str:
    """The statement that writes the log row of the version at ``location``."""
    version = version_locations.parse_version(location)
    if version is None:
        raise run_errors.MutableRunError(f"{location!r} is not a version directory")

    def text(value: Optional[str]) -> str:
        return "cast(null as string)" if value is None else sql_string_literal(value)

    values = [
        f"cast({version} as bigint) as version",
        f"{text(location.rstrip('/'))} as location",
        f"{text(parent.rstrip('/') if parent else None)} as parent",
        f"cast({int(written_ms)} as bigint) as written_ms",
        f"cast({int(counts.get('insert') or 0)} as bigint) as inserts",
        f"cast({int(counts.get('update') or 0)} as bigint) as updates",
        f"cast({int(counts.get('delete') or 0)} as bigint) as deletes",
        f"{text(invocation_id)} as invocation_id",
        f"{text(kind)} as kind",
        f"{text(holder)} as holder",
    ]
    return (
        f"insert overwrite directory {sql_string_literal(log_location(location))} "
        f"using parquet select {', '.join(values)}"
    )


def read_log_sql(base: str) -> str:
    columns = ", ".join(name for name, _ in LOG_COLUMNS)
    return f"select {columns} from parquet.`{log_glob(base)}`"


def parse_log_rows(rows: Iterable[Sequence[Any]]) -> list[VersionRecord]:
    records = []
    for row in rows:
        values = dict(zip((name for name, _ in LOG_COLUMNS), row))
        if values.get("version") is None or not values.get("location"):
            continue
        records.append(
            VersionRecord(
                version=int(values["version"]),
                location=str(values["location"]).rstrip("/"),
                parent=str(values["parent"]).rstrip("/") if values.get("parent") else None,
                written_ms=int(values.get("written_ms") or 0),
                inserts=int(values.get("inserts") or 0),
                updates=int(values.get("updates") or 0),
                deletes=int(values.get("deletes") or 0),
                invocation_id=str(values.get("invocation_id") or ""),
                kind=str(values.get("kind") or "run"),
                holder=str(values.get("holder") or ""),
            )
        )
    return records


def _same(a: str, b: str) -> bool:
    """Two spellings of one location (``file:/x`` and ``file:///x``, a trailing ``/``)."""
    return _name(a) == _name(b)


def committed_chain(records: Sequence[VersionRecord], current_location: str) -> list[str]:
    """The committed version directories, newest (the current one) first: the
    ``parent`` links from the current location. A committed parent without a log row
    (written before the log existed) ends the chain."""
    by_name = {_name(r.location): r for r in records}
    chain = [current_location.rstrip("/")]
    seen = {_name(current_location)}
    record = by_name.get(_name(current_location))
    while record is not None and record.parent and _name(record.parent) not in seen:
        chain.append(record.parent)
        seen.add(_name(record.parent))
        record = by_name.get(_name(record.parent))
    return chain


def kept_versions(
    records: Sequence[VersionRecord], current_location: str, versions_kept: int
) -> list[str]:
    """The committed versions that can still be read, newest first: the current one and
    those whose log row remains (removing a version removes its log row too)."""
    logged = {_name(r.location) for r in records}
    chain = committed_chain(records, current_location)
    readable = [p for i, p in enumerate(chain) if i == 0 or _name(p) in logged]
    return readable[: max(1, versions_kept)]


def _abandoned(record: Optional[VersionRecord], now_ms: int) -> bool:
    if record is None:
        return False
    properties = {
        ownership.PROP_HOLDER: record.holder,
        ownership.PROP_CREATED_MS: record.written_ms,
    }
    return ownership.abandoned(properties, now_ms, LEFTOVER_MAX_AGE_MS)


def plan_removal(
    current_location: str,
    versions_kept: int,
    records: Sequence[VersionRecord],
    listed: Optional[Sequence[str]],
    committed_now: bool,
    now_ms: int,
) -> list[str]:
    """What a run removes after committing (``committed_now``) or after committing
    nothing: version directories and log rows (``<base>/_jammi_versions/<name>``).

    ``listed`` is the base directory's listing (the embedded session) or None (no file
    system client: only what the log names can be found). Never the kept versions."""
    current_version = version_locations.parse_version(current_location) or 0
    chain = committed_chain(records, current_location)
    kept = {_name(p) for p in chain[: max(1, versions_kept)]}
    committed = {_name(p) for p in chain}
    by_name = {_name(r.location): r for r in records}
    candidates: dict[str, str] = {_name(r.location): r.location for r in records}
    for path in chain:
        candidates.setdefault(_name(path), path)
    for path in listed or ():
        if version_locations.parse_version(path) is not None:
            candidates[_name(path)] = path.rstrip("/")
    listed_names = {_name(p) for p in listed or ()}
    remove = []
    for name, path in sorted(candidates.items()):
        if name in kept:
            continue
        record = by_name.get(name)
        version = version_locations.parse_version(path) or 0
        if name in committed:
            gone = True  # an old committed version: nothing writes or commits it again
        elif name in listed_names:
            # seen on disk: the commit protocol's rule (an uncommitted directory newer
            # than the current version may be a run in progress, unless this run just
            # committed: such a run then fails its commit check)
            gone = committed_now or version <= current_version
        else:
            gone = _abandoned(record, now_ms)
        if not gone:
            continue
        if listed is None or name in listed_names:
            remove.append(path)
        if record is not None:
            remove.append(log_location(record.location))
    return remove


def history_rows(
    records: Sequence[VersionRecord], current_location: str, versions_kept: int
) -> list[dict[str, Any]]:
    """The kept versions, newest first, as ``mutable_table_history`` prints them."""
    by_name = {_name(r.location): r for r in records}
    rows = []
    for index, path in enumerate(kept_versions(records, current_location, versions_kept)):
        record = by_name.get(_name(path))
        rows.append(
            {
                "version": version_locations.parse_version(path),
                "committed_ms": record.written_ms if record else None,
                "inserts": record.inserts if record else None,
                "updates": record.updates if record else None,
                "deletes": record.deletes if record else None,
                "invocation_id": record.invocation_id if record else None,
                "kind": record.kind if record else None,
                "current": index == 0,
                "location": path,
            }
        )
    return rows


def kept_location(
    model_name: str,
    records: Sequence[VersionRecord],
    current_location: str,
    versions_kept: int,
    version: int,
) -> str:
    """The directory of kept ``version``; a clear error when it is not kept."""
    kept = kept_versions(records, current_location, versions_kept)
    for path in kept:
        if version_locations.parse_version(path) == version:
            return path
    numbers = ", ".join(str(version_locations.parse_version(p)) for p in kept)
    raise run_errors.MutableRunError(
        f"mutable_table '{model_name}': version {version} is not kept (kept versions: "
        f"{numbers}; versions_kept: {versions_kept}). Nothing was read or changed.\n"
        "  Fix: pick a kept version (dbt run-operation mutable_table_history --args "
        f"'{{model: {model_name}}}'), or raise versions_kept to keep more in future."
    )
