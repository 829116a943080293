"""The session capability probe: asked once per connection, drives file_format auto."""

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from tests.conftest import test_file_format


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
                for _ in range(5):
                    assert adapter.delta_available() == first
                    adapter.resolve_file_format("auto", "m")
        finally:
            del adapter.execute
        assert calls == ["SET spark.sql.extensions"]
        assert first == (test_file_format() == "delta")

    def test_auto_and_explicit_formats(self, project):
        adapter = project.adapter
        with adapter.connection_named("formats"):
            expected_auto = "delta" if adapter.delta_available() else "parquet"
            assert adapter.resolve_file_format("auto", "m") == expected_auto
            assert adapter.resolve_file_format("parquet", "m") == "parquet"
            if not adapter.delta_available():
                with pytest.raises(JammiValidationError) as info:
                    adapter.resolve_file_format("delta", "products")
                message = str(info.value)
                assert "model 'products'" in message
                assert "spark.sql.extensions" in message and "dbt-jammi[delta]" in message
