"""Commit paths of a mutable table: the rewrite's compare-and-swap claim, the Delta
merge with conflict retry, who owns a run's leftovers and when they may be removed.
Part of mutable_table/ (layer 4)."""
