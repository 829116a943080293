"""Row rules of a mutable table: one module per rule (its option validation and its
planner contribution), listed in registry.py; the service the run's phases
use is rules_service.
Part of mutable_table/ (layer 4)."""
