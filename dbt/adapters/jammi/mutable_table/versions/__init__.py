"""Kept versions of a mutable table: which version directories stay readable
(kept_versions), reads as of a kept version, history and rollback (version_reads),
Iceberg's snapshots (iceberg_snapshots) and their expiry (iceberg_expiry), the service
the face and the commits use (versions_service).
Part of mutable_table/ (layer 4)."""
