"""engine/hive_compat.py: PyHive's Thrift client as the adapter wraps it at open, on a
fake TCLIService client (no server): column-less row sets fetch as no rows, and a
failed statement's status is asked again until its error message is there."""

from __future__ import annotations

from types import SimpleNamespace

from dbt.adapters.jammi.engine import hive_compat
from dbt.adapters.jammi.engine.hive_compat import ERROR_STATE, normalize_thrift_answers

FINISHED_STATE = 2


def status(state: int, message: str | None = None):
    return SimpleNamespace(operationState=state, errorMessage=message)


class FakeClient:
    """Answers GetOperationStatus from ``statuses`` in order (the last one repeats)."""

    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.asked = 0

    def GetOperationStatus(self, req):  # noqa: N802
        self.asked += 1
        return self.statuses[min(self.asked, len(self.statuses)) - 1]

    def FetchResults(self, req):  # noqa: N802
        return SimpleNamespace(results=SimpleNamespace(columns=None, rows=[]))


def wrapped(client, sleeps):
    handle = SimpleNamespace(handle=SimpleNamespace(_client=client))
    normalize_thrift_answers(handle)
    thrift = handle.handle._client
    thrift._sleep = sleeps.append
    return thrift


def test_an_error_polled_before_its_message_is_asked_again_until_the_message_is_there():
    missing = "[TABLE_OR_VIEW_NOT_FOUND] The table or view `s`.`topics` cannot be found."
    client = FakeClient([status(ERROR_STATE), status(ERROR_STATE), status(ERROR_STATE, missing)])
    sleeps: list[float] = []
    answer = wrapped(client, sleeps).GetOperationStatus("req")
    assert answer.errorMessage == missing
    assert client.asked == 3
    assert sleeps == list(hive_compat.ERROR_MESSAGE_WAITS[:2])


def test_an_error_that_never_gets_a_message_is_returned_after_the_waits():
    client = FakeClient([status(ERROR_STATE)])
    sleeps: list[float] = []
    answer = wrapped(client, sleeps).GetOperationStatus("req")
    assert answer.operationState == ERROR_STATE and not answer.errorMessage
    assert client.asked == len(hive_compat.ERROR_MESSAGE_WAITS) + 1
    assert sum(sleeps) < 3.5


def test_other_states_and_errors_with_their_message_are_answered_at_once():
    for first in (status(FINISHED_STATE), status(ERROR_STATE, "boom")):
        client = FakeClient([first])
        sleeps: list[float] = []
        assert wrapped(client, sleeps).GetOperationStatus("req") is first
        assert client.asked == 1 and sleeps == []


def test_the_error_state_is_tclis_own():
    from TCLIService.ttypes import TOperationState

    assert ERROR_STATE == TOperationState.ERROR_STATE
    assert FINISHED_STATE == TOperationState.FINISHED_STATE


def test_a_column_less_row_set_fetches_as_no_rows_and_wrapping_twice_is_a_no_op():
    client = FakeClient([status(FINISHED_STATE)])
    thrift = wrapped(client, [])
    assert thrift.FetchResults("req").results.columns == []
    handle = SimpleNamespace(handle=SimpleNamespace(_client=thrift))
    normalize_thrift_answers(handle)
    assert handle.handle._client is thrift
