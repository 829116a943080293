"""Kept versions of a mutable table: which version directories stay readable (kept),
reads as of a kept version, history and rollback (reads), the adapter mixin (adapter).
Part of mutable_table/ (layer 4)."""
