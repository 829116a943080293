"""Row rules of a mutable table: one module per rule (its option validation and its
planner contribution), listed in registry.py; the adapter mixin is rules_adapter.
Part of mutable_table/ (layer 4)."""
