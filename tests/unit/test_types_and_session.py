from __future__ import annotations

import pytest

from dbt.adapters.jammi import session as session_module
from dbt.adapters.jammi.credentials import JammiCredentials
from dbt.adapters.jammi.errors import JammiValidationError
from dbt.adapters.jammi.session import SessionCapabilities, apply_session_defaults
from dbt.adapters.jammi.types import map_spark_type
from dbt.adapters.jammi.validation import (
    sql_string_literal,
    validate_tenant_value,
)


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
    assert params["spark.sql.session.timeZone"] == "UTC"


def test_profile_settings_win_over_session_defaults(tmp_path):
    creds = JammiCredentials(
        method="session",
        schema="s",
        host="localhost",
        server_side_parameters={"spark.sql.warehouse.dir": "/elsewhere"},
    )
    apply_session_defaults(creds, str(tmp_path))
    assert creds.server_side_parameters["spark.sql.warehouse.dir"] == "/elsewhere"


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
    monkeypatch.setattr(session_module, "_java_binary", lambda: None)
    session_module.java_problem.cache_clear()
    try:
        problem = session_module.java_problem()
    finally:
        session_module.java_problem.cache_clear()
    assert problem is not None and "\n" not in problem
    assert "Java 17" in problem and "openjdk-17" in problem


def test_old_java_is_reported(monkeypatch, tmp_path):
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setattr(session_module, "_java_binary", lambda: str(fake))
    session_module.java_problem.cache_clear()
    try:
        problem = session_module.java_problem()
    finally:
        session_module.java_problem.cache_clear()
    assert problem is not None and "found Java 11" in problem
