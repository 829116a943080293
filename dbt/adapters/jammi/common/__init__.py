"""Common: plain values and checks every wing uses.

Errors, the closed column type set, identifier/literal quoting and definition checks,
user predicates; the SQL interface every service runs its statements through
(sql_session), the relations it may make and look up (relations), and the mixins' way
to that interface (statements).
Layer 0: imports nothing from dbt.adapters.jammi outside common/.
"""
