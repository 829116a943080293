"""Who made a run's leftovers (staging tables, commit claims), and whether that run is
provably gone.

A run stamps what it creates besides the table with its *holder*: the host, the process
id and the connection method of the dbt process. Another run may remove such a leftover
only when its owner is provably abandoned:

- the owner ran on this host with the embedded session (``method: session``) and its
  process no longer exists: the Spark driver died with it, so nothing of that run can
  still be executing; or
- the leftover is older than a limit no live run reaches (its ``max_age_ms``).

A leftover of a live run on another host, or of a remote connection (thrift, http, odbc,
where a dead client may leave a statement still running on the server), is only ever
removed by age.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

PROP_HOLDER = "jammi.holder"
PROP_CREATED_MS = "jammi.created_ms"
SESSION_METHOD = "session"


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    method: str

    def render(self) -> str:
        return f"{self.host}:{self.pid}:{self.method}"

    @classmethod
    def parse(cls, value: Any) -> Optional[Holder]:
        parts = str(value or "").rsplit(":", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        return cls(parts[0], int(parts[1]), parts[2])


def this_holder(method: str) -> Holder:
    return Holder(socket.gethostname(), os.getpid(), str(method))


def process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def holder_properties(holder: Holder, now_ms: int) -> dict[str, str]:
    """The table properties that stamp a leftover with its owner and creation time."""
    return {PROP_HOLDER: holder.render(), PROP_CREATED_MS: str(now_ms)}


def holder_ended(properties: Mapping[str, Any]) -> bool:
    """True when the leftover's holder ran on this host and its process is gone. For an
    embedded session that makes the leftover abandoned; for a remote connection it does
    not (a statement the holder sent may still run on the server), but no live run on
    this host will finish what it started."""
    holder = Holder.parse(properties.get(PROP_HOLDER))
    return (
        holder is not None and holder.host == socket.gethostname() and not process_alive(holder.pid)
    )


def abandoned(properties: Mapping[str, Any], now_ms: int, max_age_ms: int) -> bool:
    """True when the leftover described by ``properties`` provably belongs to no live run.

    Leftovers without an owner stamp (made before stamps existed) count as abandoned once
    they are older than ``max_age_ms`` by their recorded time, or at once when they carry
    no time either; nothing a current run creates lacks both."""
    created = str(properties.get(PROP_CREATED_MS) or "")
    age_known = created.isdigit()
    if age_known and now_ms - int(created) > max_age_ms:
        return True
    holder = Holder.parse(properties.get(PROP_HOLDER))
    if holder is None:
        return not age_known
    if holder.method != SESSION_METHOD or holder.host != socket.gethostname():
        return False
    return not process_alive(holder.pid)
