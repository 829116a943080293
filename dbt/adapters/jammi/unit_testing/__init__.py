"""Unit testing: dbt `unit_tests:` fixtures for models that read topics and mutable tables
(fixtures decides; unit_testing_adapter is the Jinja side).

Layer 5: may import mutable_table/, topic/, tenancy/, engine/, common/, credentials.py.
"""
