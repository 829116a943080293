"""common/run_report.py: the adapter_response fields of a run, as run_results.json
serializes them."""

from dbt.adapters.contracts.connection import AdapterResponse

from dbt.adapters.jammi.common.run_report import (
    consumer_response,
    mutable_run_response,
    publish_response,
)
from dbt.adapters.jammi.mutable_table.commit.merge_commit import change_counts


def test_a_mutable_runs_counts_and_version_are_serialized():
    response = mutable_run_response(change_counts(2, 1, 0), 7)
    assert response.to_dict(omit_none=True) == {
        "_message": "INSERT 2, UPDATE 1, DELETE 0",
        "code": "MUTABLE",
        "rows_affected": 3,
        "rows_inserted": 2,
        "rows_updated": 1,
        "rows_deleted": 0,
        "table_version": 7,
    }
    assert "table_version" not in mutable_run_response(change_counts(0, 0, 0), None).to_dict(
        omit_none=True
    )


def test_a_consumer_keeps_its_own_response_and_adds_what_it_read():
    own = AdapterResponse(_message="OK", code="INSERT", rows_affected=4)
    read = consumer_response(own, {"s.orders": (2, 5, 9)}).to_dict(omit_none=True)
    assert read == {
        "_message": "OK",
        "code": "INSERT",
        "rows_affected": 4,
        "events_read": 9,
        "offsets_read": {"s.orders": [2, 5]},
    }
    # a second topic read by the same model adds up
    both = consumer_response(consumer_response(own, {"s.a": (0, 1, 3)}), {"s.b": (4, 6, 2)})
    assert both.events_read == 5 and both.offsets_read == {"s.a": [0, 1], "s.b": [4, 6]}
    assert consumer_response(None, {"s.a": (0, 1, 3)}).to_dict(omit_none=True)["events_read"] == 3


def test_a_topic_that_consumes_reports_both():
    consumed = consumer_response(None, {"s.src": (0, 2, 6)})
    published = publish_response(6, 3, consumed).to_dict(omit_none=True)
    assert published["offset"] == 3 and published["rows_affected"] == 6
    assert published["events_read"] == 6 and published["offsets_read"] == {"s.src": [0, 2]}
    assert "events_read" not in publish_response(1, 1, AdapterResponse(_message="OK")).to_dict(
        omit_none=True
    )
