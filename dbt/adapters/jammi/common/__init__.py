"""Common: plain values and checks every wing uses.

Errors, the closed column type set, identifier/literal quoting and definition checks,
user predicates, the StatementsMixin every protocol runs its SQL through.
Layer 0: imports nothing from dbt.adapters.jammi outside common/.
"""
