"""method: connect's handle: dbt-spark's session cursor on a remote SparkSession, and a
clear error naming the profile fields when the server cannot be reached (no Spark)."""

from __future__ import annotations

import socket

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.connect_url import connect_url
from dbt.adapters.jammi.engine.bindings import JammiSessionConnectionWrapper
from dbt.adapters.jammi.engine.connect import RemoteConnection, remote_session, wait_for_server


class FakeRemoteSession:
    def __init__(self) -> None:
        self.statements: list[str] = []

    def sql(self, sql: str):
        self.statements.append(sql)
        return None


def test_the_handle_is_dbt_sparks_session_wrapper_on_the_remote_session():
    spark = FakeRemoteSession()
    handle = JammiSessionConnectionWrapper(RemoteConnection(spark))
    assert remote_session(handle) is spark
    handle.cursor().execute("insert into t values (%s, %s, %s);", ["it's", None, 2**60])
    # the adapter's exact bindings, the trailing ';' dropped as on the embedded session
    assert spark.statements == [f"insert into t values ('it\\'s', NULL, {2**60})"]


def test_an_embedded_session_handle_has_no_remote_session():
    assert remote_session(object()) is None


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_names_the_profile_fields():
    url = connect_url("127.0.0.1", _closed_port(), token="secret", use_ssl=False)
    with pytest.raises(DbtRuntimeError) as raised:
        wait_for_server(url, timeout=1)
    message = str(raised.value)
    assert "cannot reach a Spark Connect server at sc://127.0.0.1:" in message
    assert "profile fields 'host' and 'port'" in message
    assert "secret" not in message  # the token is redacted
