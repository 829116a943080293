"""The test lanes' own checks: JAMMI_TEST_ANSI (tests/conftest.py) and the counts
scripts/lane_report.py shows in `make spark35-lane`'s summary. Each must be able to fail."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dbt.adapters.jammi.credentials import JammiCredentials
from tests.conftest import ANSI, AnsiCheck, jammi_profile_target


class FakeConf:
    def __init__(self, values: dict[str, str]):
        self.values = values

    def get(self, key: str) -> str:
        return self.values[key]


class FakeSession:
    """A session whose conf says `conf_ansi` and whose invalid cast behaves as `casts`."""

    def __init__(self, conf_ansi: str, casts: str):
        self.conf = FakeConf({ANSI: conf_ansi})
        self.casts = casts
        self.queries: list[str] = []

    def sql(self, query: str):
        self.queries.append(query)
        if self.casts == "true":
            raise RuntimeError("[CAST_INVALID_INPUT] The value 'jammi' of the type ...")
        return FakeRows([(None,)])


class FakeRows:
    def __init__(self, rows):
        self.rows = rows

    def collect(self):
        return self.rows


def test_ansi_asked_for_reaches_the_profile_and_the_credentials(monkeypatch):
    monkeypatch.setenv("JAMMI_TEST_ANSI", "true")
    target = jammi_profile_target()
    assert target["server_side_parameters"][ANSI] == "true"
    creds = JammiCredentials(
        method="session",
        schema="s",
        host="localhost",
        server_side_parameters=target["server_side_parameters"],
    )
    assert creds.server_side_parameters[ANSI] == "true"


def test_no_ansi_asked_for_leaves_it_to_spark(monkeypatch):
    monkeypatch.delenv("JAMMI_TEST_ANSI", raising=False)
    assert ANSI not in jammi_profile_target()["server_side_parameters"]


def test_a_misspelled_ansi_value_is_refused(monkeypatch):
    monkeypatch.setenv("JAMMI_TEST_ANSI", "on")
    with pytest.raises(pytest.UsageError, match="true or false"):
        jammi_profile_target()


def test_ansi_check_passes_when_conf_and_behaviour_agree():
    check = AnsiCheck()
    session = FakeSession(conf_ansi="true", casts="true")
    assert check.after_test("true", session) is None
    assert check.after_test("true", session) is None
    assert check.checked == 2
    assert len(session.queries) == 1  # the cast is probed once per process


def test_ansi_check_fails_when_the_session_conf_is_off():
    check = AnsiCheck()
    problem = check.after_test("true", FakeSession(conf_ansi="false", casts="false"))
    assert problem == f"JAMMI_TEST_ANSI=true but the session's {ANSI} is false"
    assert check.checked == 0 and check.problems == [problem]


def test_ansi_check_fails_when_an_invalid_cast_gives_null():
    check = AnsiCheck()
    problem = check.after_test("true", FakeSession(conf_ansi="true", casts="false"))
    assert problem is not None and "behaves as ANSI false" in problem


def test_ansi_check_counts_nothing_without_a_session():
    check = AnsiCheck()
    assert check.after_test("true", None) is None
    assert check.checked == 0  # pytest_sessionfinish fails a lane that checked nothing


def load_lane_report():
    path = Path(__file__).parents[2] / "scripts" / "lane_report.py"
    spec = importlib.util.spec_from_file_location("lane_report", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "line, counts",
    [
        ("442 passed in 1.58s", "442 passed"),
        ("150 passed, 82 skipped in 412.01s (0:06:52)", "150 passed, 82 skipped"),
        ("==== 1 failed, 2 passed, 3 warnings in 3.00s ====", "1 failed, 2 passed, 3 warnings"),
        ("2 errors in 0.50s", "2 errors"),
        ("tests/unit/topic/test_tail.py ....  [ 40%]", None),
        ("slowest 15 durations", None),
    ],
)
def test_lane_report_reads_pytests_closing_line(line, counts):
    assert load_lane_report().pytest_counts(line) == counts
