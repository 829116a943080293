"""Every ``adapter.<name>(`` a macro calls is a method the adapter exposes to Jinja
(``@available``, or dbt's own), so a method moved or removed cannot leave a macro that
fails only when a run reaches it."""

from __future__ import annotations

import re
from pathlib import Path

from dbt.adapters.jammi.impl import JammiAdapter

MACROS = Path(__file__).resolve().parents[2] / "dbt" / "include" / "jammi" / "macros"
COMMENT = re.compile(r"\{#.*?#\}", re.S)
CALL = re.compile(r"\badapter\.([A-Za-z_][A-Za-z0-9_]*)\(")
# what dbt's context gives `adapter` besides the adapter's methods
DBT_WRAPPER = {"dispatch"}


def macro_calls() -> dict[str, set[str]]:
    calls: dict[str, set[str]] = {}
    for path in sorted(MACROS.rglob("*.sql")):
        for name in CALL.findall(COMMENT.sub("", path.read_text())):
            calls.setdefault(name, set()).add(str(path.relative_to(MACROS)))
    return calls


def test_every_adapter_call_in_a_macro_is_exposed():
    exposed = set(JammiAdapter._available_) | DBT_WRAPPER
    calls = macro_calls()
    assert len(calls) > 30  # the scan found the macros
    missing = {name: sorted(files) for name, files in calls.items() if name not in exposed}
    assert missing == {}
