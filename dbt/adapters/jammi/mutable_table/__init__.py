"""Mutable table: a keyed table changed in place by a change set.

definition (+ indexes, definition_change, table_properties), rules/ (row rules: TTL,
merge functions, changelog, registered in rules/registry.py), decisions (run-time
choices), scd2 (history planner), commit/ (the commit paths: rewrite claim, Delta merge,
ownership and leftovers), adapter (the mixins the materialization calls).
Layer 4: may import topic/, tenancy/, engine/, common/, credentials.py.
"""
