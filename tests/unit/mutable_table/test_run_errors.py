"""A rejected batch's message (mutable_table/run_errors.py) and the DESCRIBE reader of a
table's location (mutable_table/table_properties.py)."""

import pytest

from dbt.adapters.jammi.mutable_table import (
    run_errors,
    table_properties,
)


def test_describe_location_and_batch_errors():
    rows = [["# Detailed Table Information", ""], ["Location", "file:/w/t/v0000000001_a"]]
    assert table_properties.describe_location(rows) == "file:/w/t/v0000000001_a"
    with pytest.raises(run_errors.MutableRunError) as info:
        run_errors.batch_error(
            "prices", "duplicate_key", [["acme", "a", 2]], ["tenant_id", "sku", "n"]
        )
    message = str(info.value)
    assert "mutable_table 'prices'" in message and "sku='a'" in message
    assert "Fix:" in message
