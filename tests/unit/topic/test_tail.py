"""The live tail's loop and input checks, with a fake reader (no dbt, no Spark)."""

from __future__ import annotations

import re

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.topic.tail import _macro_args, follow, main


class FakeReader:
    """Answers the tail's two queries from a list of published offsets."""

    def __init__(self, published: dict[int, list[dict]], high_water: int) -> None:
        self.published = published
        self.high_water = high_water
        self.queries: list[str] = []

    def query(self, sql: str) -> list[dict]:
        self.queries.append(sql)
        if "jammi_tail_high_water_sql" in sql:
            return [{"high_water": self.high_water}]
        after = int(re.search(r"jammi_tail_events_sql\('[^']*', (\d+)", sql).group(1))
        rows = [
            dict(event, _offset=offset)
            for offset, events in self.published.items()
            if offset > after
            for event in events
        ]
        return list(reversed(rows))  # the tail orders them itself


def test_follow_starts_at_the_high_water_mark_and_advances():
    reader = FakeReader({1: [{"_row_idx": 0, "v": "old"}]}, high_water=1)
    tail = follow("cdc.orders", reader=reader, poll_seconds=0, idle_timeout=0)
    reader.published[2] = [{"_row_idx": 0, "v": "a"}, {"_row_idx": 1, "v": "b"}]
    assert [e["v"] for e in next(tail)] == ["a", "b"]
    reader.published[3] = [{"_row_idx": 0, "v": "c"}]
    assert [e["v"] for e in next(tail)] == ["c"]
    assert list(tail) == []  # idle: stops
    assert "jammi_tail_events_sql('cdc.orders', 3, none, none)" in reader.queries[-1]


def test_follow_from_offset_reads_stored_events_first():
    reader = FakeReader({1: [{"_row_idx": 0, "v": "x"}], 2: [{"_row_idx": 0, "v": "y"}]}, 2)
    batches = list(follow("cdc.orders", from_offset=2, reader=reader, idle_timeout=0))
    assert [[e["v"] for e in b] for b in batches] == [["y"]]
    assert not any("high_water" in q for q in reader.queries)


def test_macro_args_quote_text_safely():
    rendered = _macro_args("cdc.orders", 7, "op = 'd'", None)
    assert rendered == "'cdc.orders', 7, 'op = \\'d\\'', none"


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"topic": "Bad Name"}, "topic_name 'Bad Name' is not allowed"),
        ({"topic": "cdc.orders", "where": "1=1; drop table t"}, "--where"),
        ({"topic": "cdc.orders", "from_offset": 0}, "offsets start at 1"),
    ],
)
def test_follow_rejects_bad_input_before_any_read(kwargs, fragment):
    reader = FakeReader({}, 0)
    with pytest.raises(JammiValidationError, match=re.escape(fragment)):
        next(follow(reader=reader, **kwargs))
    assert reader.queries == []


def test_main_reports_bad_input_on_stderr(capsys):
    assert main(["Bad Name"]) == 2
    assert "topic_name 'Bad Name' is not allowed" in capsys.readouterr().err
