"""What file_format iceberg refuses (mutable_table/iceberg_support.py): a changelog or
tombstones (a version rule with deletes) with expire_snapshots, each before
anything is written, with the model, the option and the fix named -- also when
`file_format: auto` picks Iceberg. The Iceberg lane runs this; elsewhere it is skipped."""

import pytest

from tests.functional.mutable_table.util import file_format, run, session_views, table_exists

pytestmark = pytest.mark.skipif(
    file_format() != "iceberg", reason="needs Iceberg's session catalog (iceberg lane)"
)

LOGGED = """
{{ config(materialized='mutable_table', primary_key=['id'], changelog=true,
          expire_snapshots=true) }}
select 1 as id, 'a' as label
"""

VERSIONED_DELETES = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='v',
          delete_when='gone', expire_snapshots=true) }}
select 1 as id, 1 as v, false as gone
"""

# no file_format: auto, which picks iceberg on this lane's session (Delta is absent)
AUTO_LOGGED = """
{{ config(materialized='mutable_table', primary_key=['id'], changelog=true,
          file_format='auto', expire_snapshots=true) }}
select 1 as id
"""

VERSIONED = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='v') }}
select 1 as id, 1 as v
"""


class TestIcebergRefusals:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "iceberg"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "logged.sql": LOGGED,
            "versioned_deletes.sql": VERSIONED_DELETES,
            "auto_logged.sql": AUTO_LOGGED,
            "versioned.sql": VERSIONED,
        }

    @pytest.mark.parametrize(
        "model, expected",
        [
            ("logged", "changelog: true numbers its versions by the snapshots"),
            ("versioned_deletes", "which count while the snapshot that committed them"),
            ("auto_logged", "changelog: true numbers its versions by the snapshots"),
        ],
    )
    def test_refused_before_anything_is_written(self, project, model, expected):
        result = run(project, model, expect_pass=False)
        message = result.results[0].message
        assert f"mutable_table '{model}'" in message and expected in message
        assert "Fix: remove expire_snapshots" in message
        assert not table_exists(project, model)
        assert f"{model}__jammi_batch" not in session_views(project)

    def test_a_version_rule_without_deletes_runs(self, project):
        run(project, "versioned")
        assert table_exists(project, "versioned")
