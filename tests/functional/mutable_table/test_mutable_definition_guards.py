"""Definition guards on existing tables, observed in Spark: a definition that names
secret-like columns survives property redaction; primary key / history / file format
changes, an empty tenant var and rejected models change nothing and leave nothing."""

import pytest

from dbt.adapters.jammi.common.validation import sql_string_literal
from tests.functional.mutable_table.util import (
    MutableProjectBase,
    registry_rows,
    rows,
    run,
    session_views,
    stored_definition,
    table_exists,
    table_rows,
)

ACCOUNTS = """
{{ config(materialized='mutable_table', primary_key=var('pk', ['id'])) }}
{% set b = var('batch', 1) %}
select * from values
{% if b == 1 %} (1, 's1', 'p1'), (2, 's2', 'p2')
{% else %} (2, 's2b', 'p2b'), (3, 's3', 'p3')
{% endif %}
as t(id, api_secret, password)
"""

KEYED = """
{{ config(materialized='mutable_table', primary_key=var('pk', ['id'])) }}
{% if var('batch', 1) == 1 %}
select * from values (1, 'a', 10), (2, 'b', 20) as t(id, sku, price)
{% else %}
select * from values (1, 'b', 99) as t(id, sku, price)
{% endif %}
"""

SHARED = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select {{ var('batch', 1) }} as id, 'x' as label
"""

NULL_KEY = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select cast(null as bigint) as id, 'a' as label
"""

RESERVED = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select 1 as id, 'acme' as tenant_id
"""


def message(results) -> str:
    return results.results[0].message or ""


class TestMutableDefinitionGuards(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "accounts.sql": ACCOUNTS,
            "keyed.sql": KEYED,
            "shared.sql": SHARED,
            "null_key.sql": NULL_KEY,
            "reserved.sql": RESERVED,
        }

    def test_secret_like_columns_survive_redaction(self, project):
        run(project, "accounts", {"batch": 1})
        assert stored_definition(project, "accounts")["primary_key"] == ["id"]
        run(project, "accounts", {"batch": 2})
        assert table_rows(project, "accounts", "id, api_secret, password") == [
            (1, "s1", "p1"),
            (2, "s2b", "p2b"),
            (3, "s3", "p3"),
        ]
        # a table written before the encoding holds plain JSON, which Spark redacts:
        # the definition is read from the registry and the property is rewritten
        plain = rows(
            project,
            f"select definition from {project.test_schema}.mutable_tables "
            "where table_id = 'accounts' order by registered_at desc limit 1",
        )[0][0]
        literal = sql_string_literal(plain).replace("{", "{{").replace("}", "}}")  # run_sql formats
        project.run_sql(
            f"alter table {project.test_schema}.accounts set tblproperties "
            f"('jammi.definition' = {literal})"
        )
        assert stored_definition(project, "accounts") is None  # redacted
        failed = run(project, "accounts", {"batch": 2, "pk": ["password"]}, expect_pass=False)
        assert "primary_key changed" in message(failed)
        run(project, "accounts", {"batch": 2})
        assert stored_definition(project, "accounts")["primary_key"] == ["id"]

    @pytest.mark.parametrize("new_key", [["sku"], ["id", "sku"]])
    def test_primary_key_change_fails_and_changes_nothing(self, project, new_key):
        run(project, "keyed", {"batch": 1})
        before = table_rows(project, "keyed", "id, sku, price")
        failed = run(project, "keyed", {"batch": 2, "pk": new_key}, expect_pass=False)
        text = message(failed)
        assert "primary_key changed from ['id']" in text
        assert "--full-refresh" in text and "full_refresh: true" in text
        assert table_rows(project, "keyed", "id, sku, price") == before
        assert stored_definition(project, "keyed")["primary_key"] == ["id"]

    @pytest.mark.parametrize("tenant", ["", "   "])
    def test_empty_tenant_var_is_an_error_and_writes_nothing(self, project, tenant):
        run(project, "shared")
        failed = run(project, "shared", {"batch": 2, "jammi_tenant": tenant}, expect_pass=False)
        assert "jammi_tenant" in message(failed)
        assert table_rows(project, "shared", "id, label, tenant_id") == [(1, "x", None)]

    def test_rejected_models_leave_no_batch_view(self, project):
        failed = run(project, "null_key reserved", expect_pass=False)
        messages = {r.node.name: r.message for r in failed.results}
        assert "NULL primary key" in messages["null_key"]
        assert "'tenant_id' is reserved" in messages["reserved"]
        for name in messages:
            assert not table_exists(project, name), name
            assert registry_rows(project, name) == []
        assert [v for v in session_views(project) if "__jammi_" in v] == []
