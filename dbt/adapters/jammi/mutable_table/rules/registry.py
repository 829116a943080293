"""The row rules of a mutable table, registered in one place.

A row rule decides something about rows (TTL expiry, how a key's rows combine, the
changelog of changes) and is one module of this folder holding:

- ``OPTIONS``: the model config keys it owns (recorded in the definition only when set);
- ``definition_fields(opts, draft, subject)``: its options validated against the draft
  definition (columns, key, version column, tenant, history), as definition fields;
- its planner contribution: the functions the change-set planner and the appliers call
  (reached from the run's phases through rules/rules_service.py).

Adding a rule: write its module, add it to ``ROW_RULES`` (and its fields to
``MutableTableDefinition``), its test in tests/unit/mutable_table/, its doc in docs/.
Rules run in this order; a later one sees the earlier ones' options only through ``opts``.
"""

from __future__ import annotations

from types import ModuleType

from dbt.adapters.jammi.mutable_table.rules import (
    changelog,
    identity,
    merge_functions,
    tombstones,
    truncates,
    ttl,
    version_groups,
)

ROW_RULES: tuple[ModuleType, ...] = (
    ttl,
    merge_functions,
    changelog,
    truncates,
    tombstones,
    identity,
    version_groups,
)

RULE_OPTIONS: tuple[str, ...] = tuple(option for rule in ROW_RULES for option in rule.OPTIONS)
