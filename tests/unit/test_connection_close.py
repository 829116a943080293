"""A connection whose Thrift server died closes without an error of its own
(JammiConnectionManager._close_handle): the statement's error is what the run reports."""

from types import SimpleNamespace

import pytest
from dbt.adapters.contracts.connection import ConnectionState
from thrift.transport.TTransport import TTransportException

from dbt.adapters.jammi.connections import JammiConnectionManager


class DeadServerHandle:
    """PyHive over a socket whose server was killed: CloseSession cannot be sent."""

    def close(self) -> None:
        raise TTransportException(message="unexpected exception", inner=BrokenPipeError(32))


def open_connection(handle) -> SimpleNamespace:
    return SimpleNamespace(
        name="model.p.items", handle=handle, state=ConnectionState.OPEN, transaction_open=False
    )


def test_a_connection_lost_with_its_server_closes_quietly():
    connection = open_connection(DeadServerHandle())
    JammiConnectionManager.close(connection)
    assert connection.state == ConnectionState.CLOSED


def test_other_close_errors_still_raise():
    class BrokenHandle:
        def close(self) -> None:
            raise ValueError("a bug, not a lost connection")

    with pytest.raises(ValueError, match="a bug"):
        JammiConnectionManager.close(open_connection(BrokenHandle()))
