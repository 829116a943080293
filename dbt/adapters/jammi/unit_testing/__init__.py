"""Unit testing: dbt `unit_tests:` fixtures for models that read topics and mutable tables.

Layer 5: may import mutable_table/, topic/, tenancy/, engine/, common/, credentials.py.
"""
