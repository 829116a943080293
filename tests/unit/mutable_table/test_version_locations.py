"""Version directories of rewrite-applied tables (mutable_table/version_locations.py)."""

from dbt.adapters.jammi.mutable_table import version_locations


def test_version_directories():
    assert version_locations.version_dir("file:/w/t", 1, "abc") == "file:/w/t/v0000000001_abc"
    assert version_locations.next_location("file:/w/t/v0000000009_abc/", "def") == (
        "file:/w/t/v0000000010_def"
    )
    # an adopted table's location (another materialization's files) is version 0: the
    # first version goes under it
    assert version_locations.next_location("file:/w/t/", "x") == "file:/w/t/v0000000001_x"
