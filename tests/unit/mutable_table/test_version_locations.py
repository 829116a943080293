"""Version directories of rewrite-applied tables (mutable_table/version_locations.py)."""

import pytest

from dbt.adapters.jammi.mutable_table import (
    run_errors,
    version_locations,
)


def test_version_directories():
    assert version_locations.version_dir("file:/w/t", 1, "abc") == "file:/w/t/v0000000001_abc"
    assert version_locations.next_location("file:/w/t/v0000000009_abc/", "def") == (
        "file:/w/t/v0000000010_def"
    )
    with pytest.raises(run_errors.MutableRunError, match="not a mutable_table version"):
        version_locations.next_location("file:/w/t", "x")
    children = [
        "file:/w/t/v0000000001_a",
        "file:/w/t/v0000000002_b",
        "file:/w/t/v0000000003_c",
        "file:/w/t/v0000000003_d",
        "file:/w/t/_other",
    ]
    current = "file:/w/t/v0000000002_b"
    assert version_locations.stale_version_dirs(children, current, keep_newer=True) == [
        "file:/w/t/v0000000001_a"
    ]
    assert version_locations.stale_version_dirs(children, current, keep_newer=False) == [
        "file:/w/t/v0000000001_a",
        "file:/w/t/v0000000003_c",
        "file:/w/t/v0000000003_d",
    ]
