"""Kept versions of a mutable table: which version directories stay readable (kept),
reads as of a kept version, history and rollback (reads), Iceberg's versions from its
snapshots (iceberg_snapshots) and their expiry (iceberg_expiry), the adapter mixin (adapter).
Part of mutable_table/ (layer 4)."""
