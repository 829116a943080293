from __future__ import annotations

import decimal
from types import SimpleNamespace

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import map_spark_type
from dbt.adapters.jammi.common.validation import (
    sql_string_literal,
    validate_tenant_value,
)
from dbt.adapters.jammi.credentials import SESSION_SQL_DEFAULTS, JammiCredentials
from dbt.adapters.jammi.engine import session
from dbt.adapters.jammi.engine.bindings import JammiSessionConnectionWrapper
from dbt.adapters.jammi.engine.session import (
    SessionCapabilities,
    apply_session_defaults,
    driver_java_options,
    start_embedded_session,
)
from dbt.adapters.jammi.mutable_table.session_formats import SessionFormats
from tests.unit.rejections import rejects


@pytest.mark.parametrize(
    "spark_type, closed",
    [
        ("int", "int"),
        ("integer", "int"),
        ("long", "bigint"),
        ("short", "smallint"),
        ("byte", "tinyint"),
        ("varchar(10)", "string"),
        ("Boolean", "boolean"),
        ("decimal(10,2)", None),
        ("array<int>", None),
        ("timestamp_ntz", None),
        ("interval day to second", None),
        # Spark 4's spellings
        ("string collate UTF8_BINARY", "string"),
        ("varchar(5) collate UTF8_BINARY", "string"),
        ("string collate UTF8_LCASE", None),
        ("string collate UNICODE_CI", None),
        ("int collate UTF8_BINARY", None),
        ("variant", None),
        ("time(6)", None),
        ("time", None),
    ],
)
def test_type_mapping(spark_type, closed):
    assert map_spark_type(spark_type).closed_type == closed


def test_embedded_session_state_lives_in_the_project(tmp_path, monkeypatch):
    monkeypatch.chdir("/")
    creds = JammiCredentials(method="session", schema="s", host="localhost")
    apply_session_defaults(creds, str(tmp_path))
    params = creds.server_side_parameters
    assert params["spark.sql.warehouse.dir"] == str(tmp_path / ".spark" / "warehouse")
    assert (
        str(tmp_path / ".spark" / "metastore_db")
        in params["spark.hadoop.javax.jdo.option.ConnectionURL"]
    )
    assert params["spark.ui.enabled"] == "false"
    # Spark SQL settings are never put where dbt-spark re-applies them per statement.
    assert not any(key in params for key in SESSION_SQL_DEFAULTS)
    assert "spark.sql.sources.partitionOverwriteMode" not in params


def test_session_sql_defaults_do_not_touch_what_dbt_spark_sets():
    assert set(SESSION_SQL_DEFAULTS) == {
        "spark.sql.session.timeZone",
        "spark.sql.shuffle.partitions",
        # old dates and timestamps are written as they are instead of failing the write
        "spark.sql.parquet.datetimeRebaseModeInWrite",
        "spark.sql.parquet.int96RebaseModeInWrite",
    }
    assert SESSION_SQL_DEFAULTS["spark.sql.parquet.int96RebaseModeInWrite"] == "CORRECTED"


class _FakeConf:
    def __init__(self, keys):
        self.keys = set(keys)

    def contains(self, key):
        return key in self.keys


class _FakeSession:
    def __init__(self, master, context_keys):
        self.sparkContext = type(
            "Ctx", (), {"master": master, "getConf": lambda _: _FakeConf(context_keys)}
        )()
        self.set_calls = []
        self.conf = type("Conf", (), {"set": lambda _, k, v: self.set_calls.append((k, v))})()


def _fake_pyspark(monkeypatch, fake_session, active=None):
    import pyspark
    import pyspark.sql

    class Builder:
        options = {}

        def enableHiveSupport(self):
            return self

        def config(self, key, value):
            self.options[key] = value
            return self

        def getOrCreate(self):
            return fake_session

    monkeypatch.setattr(pyspark.SparkContext, "_active_spark_context", active)
    monkeypatch.setattr(pyspark.sql.SparkSession, "builder", Builder())
    return Builder


@pytest.mark.parametrize(
    "master, context_keys, expected",
    [
        ("local[2]", set(), SESSION_SQL_DEFAULTS),
        (
            "local[*]",
            {"spark.sql.shuffle.partitions"},
            {k: v for k, v in SESSION_SQL_DEFAULTS.items() if k != "spark.sql.shuffle.partitions"},
        ),
        ("yarn", set(), {}),
    ],
)
def test_sql_defaults_are_set_once_on_a_new_local_session(
    monkeypatch, master, context_keys, expected
):
    fake_session = _FakeSession(master, context_keys)
    builder = _fake_pyspark(monkeypatch, fake_session)
    start_embedded_session({"spark.master": master})
    assert builder.options == {"spark.master": master}
    assert dict(fake_session.set_calls) == dict(expected)


def test_a_running_session_is_left_alone(monkeypatch):
    fake_session = _FakeSession("local[2]", set())
    _fake_pyspark(monkeypatch, fake_session, active=object())
    start_embedded_session({})
    assert fake_session.set_calls == []


def test_profile_settings_win_over_session_defaults(tmp_path):
    creds = JammiCredentials(
        method="session",
        schema="s",
        host="localhost",
        server_side_parameters={"spark.sql.warehouse.dir": "/elsewhere"},
    )
    apply_session_defaults(creds, str(tmp_path))
    assert creds.server_side_parameters["spark.sql.warehouse.dir"] == "/elsewhere"


def test_profile_jvm_options_keep_the_session_state_in_the_project(tmp_path):
    creds = JammiCredentials(
        method="session",
        schema="s",
        host="localhost",
        server_side_parameters={"spark.driver.extraJavaOptions": "-XX:+UseSerialGC"},
    )
    apply_session_defaults(creds, str(tmp_path))
    options = creds.server_side_parameters["spark.driver.extraJavaOptions"].split()
    assert options[0] == f"-Dderby.system.home={tmp_path / '.spark'}"
    assert options[1].startswith("-Dlog4j2.configurationFile=file:")
    assert options[2] == "-XX:+UseSerialGC"
    # A property the profile sets itself is left to it.
    assert driver_java_options("-Dderby.system.home=/x", {"derby.system.home": "/y"}) == (
        "-Dderby.system.home=/x"
    )


def test_tenant_profile_field_is_validated():
    assert JammiCredentials(method="session", schema="s", host="h", tenant="acme").tenant == "acme"
    with pytest.raises(JammiValidationError, match="control characters"):
        JammiCredentials(method="session", schema="s", host="h", tenant="a\nb")


def test_tenant_values_are_data():
    hostile = "x'; DROP TABLE t; --\\"
    assert validate_tenant_value(hostile, "t") == hostile
    literal = sql_string_literal(hostile)
    assert literal == "'x\\'; DROP TABLE t; --\\\\'"


def test_capabilities_from_extensions():
    assert SessionCapabilities.from_extensions("io.delta.sql.DeltaSparkSessionExtension").delta
    assert not SessionCapabilities.from_extensions("<undefined>").delta
    assert not SessionCapabilities.from_extensions(None).delta


def test_missing_java_is_one_clear_line(monkeypatch):
    monkeypatch.setattr(session, "_java_binary", lambda: None)
    session.java_problem.cache_clear()
    try:
        problem = session.java_problem()
    finally:
        session.java_problem.cache_clear()
    assert problem is not None and "\n" not in problem
    assert "Java 17" in problem and "openjdk-17" in problem


def test_old_java_is_reported(monkeypatch, tmp_path):
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setattr(session, "_java_binary", lambda: str(fake))
    session.java_problem.cache_clear()
    try:
        problem = session.java_problem()
    finally:
        session.java_problem.cache_clear()
    assert problem is not None and "found Java 11" in problem


@pytest.mark.parametrize(
    "value, rendered",
    [
        (None, "NULL"),
        ("O'Brien \\ Sons", "'O\\'Brien \\\\ Sons'"),
        (9007199254740993, "9007199254740993"),
        (decimal.Decimal("12345678901234567.25"), "12345678901234567.25"),
        (True, 1.0),  # dbt-spark's rendering; cast(1.0 as boolean) is true
        (1.5, 1.5),
    ],
)
def test_session_bindings_keep_their_value(value, rendered):
    assert JammiSessionConnectionWrapper._fix_binding(value) == rendered


def test_ansi_mode_is_left_to_spark_when_the_profile_does_not_set_it():
    # dbt-spark's credentials pin it to false; that pin must not reach the session.
    for method in ("session", "thrift"):
        creds = JammiCredentials(method=method, schema="s", host="localhost")
        assert "spark.sql.ansi.enabled" not in creds.server_side_parameters


@pytest.mark.parametrize("value", [True, "true", "false"])
def test_the_profiles_ansi_mode_is_kept(value):
    creds = JammiCredentials(
        method="session",
        schema="s",
        host="localhost",
        server_side_parameters={"spark.sql.ansi.enabled": value},
    )
    assert creds.server_side_parameters["spark.sql.ansi.enabled"] == str(value)


def test_capabilities_see_iceberg_only_with_its_session_catalog():
    extensions = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    catalog = "org.apache.iceberg.spark.SparkSessionCatalog"
    found = SessionCapabilities.from_extensions(extensions, catalog)
    assert found.iceberg and not found.delta
    # the extensions alone (Iceberg tables only in a named catalog) are not enough
    assert not SessionCapabilities.from_extensions(extensions, "<undefined>").iceberg
    assert not SessionCapabilities.from_extensions(None, catalog).iceberg
    both = SessionCapabilities.from_extensions(
        f"io.delta.sql.DeltaSparkSessionExtension,{extensions}", catalog
    )
    assert both.delta and both.iceberg
    assert found.catalog == "spark_catalog"


def test_capabilities_see_iceberg_in_a_catalog_service_as_the_default_catalog():
    extensions = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    # spark.sql.defaultCatalog=lake, spark.sql.catalog.lake=...SparkCatalog (type rest)
    found = SessionCapabilities.from_extensions(
        extensions, "org.apache.iceberg.spark.SparkCatalog", "lake"
    )
    assert found.iceberg and found.catalog == "lake"
    # a default catalog that is not Iceberg's
    other = SessionCapabilities.from_extensions(extensions, "com.example.Catalog", "lake")
    assert not other.iceberg
    assert SessionCapabilities.from_extensions(extensions, None, "<undefined>").catalog == (
        "spark_catalog"
    )


@pytest.mark.parametrize("name", ["lake; drop table t", "a.b", "`x`"])
def test_a_default_catalog_name_that_cannot_be_spliced_is_refused(name):
    with pytest.raises(DbtRuntimeError, match="spark.sql.defaultCatalog is .* Fix: name"):
        SessionCapabilities.from_extensions("", "org.apache.iceberg.spark.SparkCatalog", name)


def resolve(requested, model, delta=False, iceberg=False):
    """adapter.resolve_file_format (SessionFormats.resolve) on a session whose probe
    found ``delta`` / ``iceberg``."""
    session = SimpleNamespace(delta_available=lambda: delta, iceberg_available=lambda: iceberg)
    return SessionFormats.resolve(session, requested, model)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "delta, iceberg, picked",
    [(True, True, "delta"), (False, True, "iceberg"), (False, False, "parquet")],
)
def test_auto_picks_delta_then_iceberg_then_parquet(delta, iceberg, picked):
    assert resolve("auto", "m", delta, iceberg) == picked
    assert resolve(None, "m", delta, iceberg) == picked
    assert resolve("parquet", "m", delta, iceberg) == "parquet"


def test_a_format_the_session_does_not_load_is_refused_with_its_settings():
    # what tests/functional/adapter/test_session.py asserts where the lane lacks them
    rejects(
        lambda: resolve("iceberg", "events", delta=True),
        "model 'events'",
        "not Iceberg's",
        "org.apache.iceberg.spark.SparkSessionCatalog",
    )
    rejects(
        lambda: resolve("delta", "products", iceberg=True),
        "model 'products'",
        "spark.sql.extensions",
        "dbt-jammi[delta]",
    )
    assert resolve("iceberg", "events", iceberg=True) == "iceberg"
    assert resolve("DELTA", "products", delta=True) == "delta"
