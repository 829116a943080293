"""Mutable table: a keyed table changed in place by a change set.

definition (+ indexes, definition_change, column_types, tblproperties_config), rules/
(row rules: TTL, merge functions, changelog, registered in rules/registry.py), what a run
reads and records (run_config, schema_reconciliation, table_properties,
version_locations, run_errors), scd2 (history planner), commit/ (the commit paths:
rewrite commit, MERGE commit, ownership and leftovers), versions/ (kept versions, reads
of the past, rollback), the services the face holds (table_state, drift_service,
session_formats, steps), and run_service, apply_service and rollback_service (the
materialization's run and commits, which the face hands its calls to).
Layer 4: may import topic/, tenancy/, engine/, common/, credentials.py.
"""
