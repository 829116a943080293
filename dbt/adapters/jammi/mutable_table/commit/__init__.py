"""Commit paths of a mutable table: the rewrite's compare-and-swap commit
(rewrite_commit), the MERGE's commit with conflict retry (merge_commit), who owns a run's
leftovers and when they may be removed (ownership, leftovers), the service the
attempts' commits drive (commit_service).
Part of mutable_table/ (layer 4)."""
