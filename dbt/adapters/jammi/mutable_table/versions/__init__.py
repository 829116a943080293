"""Kept versions of a mutable table: which version directories stay readable
(kept_versions), reads as of a kept version, history and rollback (version_reads),
Iceberg's snapshots (iceberg_snapshots) and their expiry (iceberg_expiry), the adapter
mixin (versions_adapter).
Part of mutable_table/ (layer 4)."""
