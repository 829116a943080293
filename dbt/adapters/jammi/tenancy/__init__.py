"""Tenancy: the tenant binding's read guard.

Plan readers (EXPLAIN text, the JVM's analyzed plan, MERGE operands) reduce a statement
to its reads; the guard refuses a bound run's unscoped read; the connection hook is the
one entry point every statement passes through; the adapter mixin is the Jinja side.
Layer 2: may import engine/, common/, credentials.py.
"""
