"""Unit testing: dbt `unit_tests:` fixtures for models that read topics and mutable tables
(fixtures decides; unit_testing_service is the service the adapter's face hands Jinja's
calls to).

Layer 5: may import mutable_table/, topic/, tenancy/, engine/, common/, credentials.py.
"""
