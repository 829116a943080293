"""Random batches through dbt against the pure-Python reference, then the generic tests
on the resulting table and on deliberately corrupted copies of it (parquet path)."""

from __future__ import annotations

import random

import pytest
from dbt.tests.util import run_dbt

from tests.functional.mutable_table.util import MutableProjectBase, rows, run
from tests.scd2_reference import Event, History

SEED = 20261121
BATCHES = 12
KEYS = 5
TENANTS = ("acme", "globex")

RANDOM_ITEMS = """
{{ config(materialized='mutable_table', primary_key=['item_id'], history='scd2',
          delete_when="availability = 'gone'") }}
select item_id, price_tier, availability, cast(valid_from as bigint) as valid_from
from values
{%- for r in var('rows') %}
  ({{ r[0] }}, '{{ r[1] }}', '{{ r[2] }}', {{ r[3] }}){{ ',' if not loop.last }}
{%- endfor %}
as t(item_id, price_tier, availability, valid_from)
"""

SCD2_TEST_NAMES = (
    "scd2_valid_history",
    "scd2_one_open_row",
    "scd2_no_overlapping_intervals",
    "scd2_valid_interval_bounds",
)


def scd2_tests(indent: int) -> str:
    pad = " " * indent
    return "".join(
        f"\n{pad}- {name}:\n{pad}    arguments: {{columns: [item_id]}}" for name in SCD2_TEST_NAMES
    )


SCHEMA_YML = f"""
version: 2
models:
  - name: random_items
    data_tests:{scd2_tests(6)}
sources:
  - name: corrupt
    schema: "{{{{ target.schema }}}}"
    tables:
      - name: bad_open
        data_tests:{scd2_tests(10)}
      - name: bad_overlap
        data_tests:{scd2_tests(10)}
      - name: bad_bounds
        data_tests:{scd2_tests(10)}
"""

# rows added to a copy of the real table: (tenant, item_id, valid_from, valid_to)
CORRUPTIONS = {
    "bad_open": [("acme", 99, 100, None), ("acme", 99, 200, None)],
    "bad_overlap": [("acme", 99, 100, 300), ("acme", 99, 200, None)],
    "bad_bounds": [("acme", 99, 300, 300), ("globex", 98, 500, 400)],
}
# which tests fail on each table (two open rows of one key also overlap)
EXPECTED_FAILURES = {
    "random_items": set(),
    "bad_open": {"scd2_valid_history", "scd2_one_open_row", "scd2_no_overlapping_intervals"},
    "bad_overlap": {"scd2_valid_history", "scd2_no_overlapping_intervals"},
    "bad_bounds": {"scd2_valid_history", "scd2_valid_interval_bounds"},
}


def random_batches(seed: int = SEED):
    """(tenant, rows) per batch; rows are (item_id, price_tier, availability, valid_from)
    with several events per key, late times and deletes ('gone')."""
    rng = random.Random(seed)
    batches = []
    for _ in range(BATCHES):
        used = set()
        batch = []
        for _ in range(rng.randint(2, 8)):
            key, t = rng.randint(1, KEYS), rng.randint(1, 60) * 10
            if (key, t) in used:
                continue
            used.add((key, t))
            availability = rng.choice(["in_stock", "in_stock", "backorder", "gone"])
            batch.append((key, rng.choice(["gold", "silver"]), availability, t))
        batches.append((rng.choice(TENANTS), batch))
    return batches


def reference_history(batches) -> History:
    reference = History(track_columns=["availability", "price_tier"])
    for tenant, batch in batches:
        reference.apply_batch(
            Event(
                (tenant, key),
                t,
                None
                if availability == "gone"
                else {"availability": availability, "price_tier": tier},
            )
            for key, tier, availability, t in batch
        )
    return reference


def stored_history(project) -> list:
    found = rows(
        project,
        "select tenant_id, item_id, valid_from, valid_to, availability, price_tier "
        f"from {project.test_schema}.random_items",
    )
    out = [((r[0], r[1]), r[2], r[3], (r[4], r[5])) for r in found]
    return sorted(out, key=lambda row: (repr(row[0]), row[1]))


@pytest.mark.connection_agnostic
class TestScd2Randomized(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"random_items.sql": RANDOM_ITEMS, "schema.yml": SCHEMA_YML}

    def test_random_batches_match_reference(self, project, fmt):
        batches = random_batches()
        for number, (tenant, batch) in enumerate(batches, start=1):
            run(project, "random_items", {"rows": [list(r) for r in batch], "jammi_tenant": tenant})
            expected = reference_history(batches[:number]).rows()
            assert stored_history(project) == expected, f"after batch {number}: {batch}"
        assert len(expected) >= 15  # the batches built a real history

    def test_generic_tests_fail_on_corrupted_tables(self, project, fmt):
        schema = project.test_schema
        for table, extra in CORRUPTIONS.items():
            values = ", ".join(
                f"({item_id}, 'gold', 'in_stock', {vf}, {'null' if vt is None else vt}, '{tenant}')"
                for tenant, item_id, vf, vt in extra
            )
            project.run_sql(
                f"create table {schema}.{table} using parquet as "
                f"select item_id, price_tier, availability, valid_from, valid_to, tenant_id "
                f"from {schema}.random_items union all select * from values {values} "
                "as t(item_id, price_tier, availability, valid_from, valid_to, tenant_id)"
            )
        # dbt test compiles random_items too: give it a batch to render
        results = run_dbt(
            ["test", "--vars", '{"rows": [[1, "gold", "in_stock", 10]]}'], expect_pass=False
        )
        failed: dict[str, set[str]] = {name: set() for name in EXPECTED_FAILURES}
        for result in results:
            node = result.node
            table = node.sources[0][1] if node.sources else node.refs[0].name
            if result.status == "fail":
                failed[table].add(node.test_metadata.name)
            else:
                assert result.status == "pass", (table, node.test_metadata.name, result.message)
        assert failed == EXPECTED_FAILURES
        assert len(results) == 16
