"""The session capability probe: asked once per connection, drives file_format auto
(delta, else iceberg when the session catalog is Iceberg's, else parquet)."""

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from tests.conftest import rest_catalog_uri, test_file_format


class TestCapabilityProbe:
    def test_probe_runs_once_per_connection(self, project):
        adapter = project.adapter
        calls = []
        original = adapter.execute

        def counting_execute(sql, *args, **kwargs):
            calls.append(sql)
            return original(sql, *args, **kwargs)

        adapter.execute = counting_execute
        try:
            with adapter.connection_named("probe"):
                first = adapter.delta_available()
                iceberg = adapter.iceberg_available()
                for _ in range(5):
                    assert adapter.delta_available() == first
                    assert adapter.iceberg_available() == iceberg
                    adapter.resolve_file_format("auto", "m")
        finally:
            del adapter.execute
        # the extensions, the default catalog's name, then its class
        catalog = "jammi_rest" if rest_catalog_uri() else "spark_catalog"
        assert calls == [
            "SET spark.sql.extensions",
            "set spark.sql.defaultCatalog",
            f"SET spark.sql.catalog.{catalog}",
        ]
        assert first == (test_file_format() == "delta")
        assert iceberg == (test_file_format() == "iceberg")

    def test_auto_and_explicit_formats(self, project):
        adapter = project.adapter
        with adapter.connection_named("formats"):
            expected_auto = {"delta": "delta", "iceberg": "iceberg"}.get(
                test_file_format(), "parquet"
            )
            assert adapter.resolve_file_format("auto", "m") == expected_auto
            assert adapter.resolve_file_format("parquet", "m") == "parquet"
            if not adapter.iceberg_available():
                with pytest.raises(JammiValidationError) as info:
                    adapter.resolve_file_format("iceberg", "events")
                message = str(info.value)
                assert "model 'events'" in message and "not Iceberg's" in message
                assert "org.apache.iceberg.spark.SparkSessionCatalog" in message
            if not adapter.delta_available():
                with pytest.raises(JammiValidationError) as info:
                    adapter.resolve_file_format("delta", "products")
                message = str(info.value)
                assert "model 'products'" in message
                assert "spark.sql.extensions" in message and "dbt-jammi[delta]" in message
