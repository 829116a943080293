"""Bad definitions fail before anything is created."""

import pytest

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    registry_rows,
    run,
    table_exists,
)

RESERVED = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select 1 as id, 'acme' as tenant_id
"""

UNDERSCORE = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select 1 as id, 2 as _hidden
"""

WRONG_TYPE = """
{{ config(materialized='mutable_table', primary_key=['id'], type_set='jammi') }}
select 1 as id, current_timestamp() as seen_at
"""

NESTED_KEY = """
{{ config(materialized='mutable_table', primary_key=['tags']) }}
select array('a') as tags, 1 as n
"""

BAD_KEY = """
{{ config(materialized='mutable_table', primary_key=['missing']) }}
select 1 as id
"""


# connection_agnostic: refused in Python before any SQL
@pytest.mark.connection_agnostic
class TestMutableValidation(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "reserved.sql": RESERVED,
            "underscore.sql": UNDERSCORE,
            "wrong_type.sql": WRONG_TYPE,
            "bad_key.sql": BAD_KEY,
            "nested_key.sql": NESTED_KEY,
        }

    def test_rejected_before_anything_is_created(self, project):
        results = run(project, expect_pass=False)
        messages = {r.node.name: r.message for r in results.results}
        assert "'tenant_id' is reserved" in messages["reserved"]
        assert "'_hidden' is reserved" in messages["underscore"]
        assert "to_epoch_millis" in messages["wrong_type"]
        assert "'missing' is not in the model's output" in messages["bad_key"]
        assert "primary_key column 'tags' has the nested type" in messages["nested_key"]
        for name in messages:
            assert not table_exists(project, name), name
            assert registry_rows(project, name) == []
