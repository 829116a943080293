"""A Hive-format table's rewrite (mutable_table/hive_adoption.py): its three statements,
what a stopped run's successor does, and the names it uses. The runs themselves:
tests/functional/mutable_table/test_hive_adoption.py."""

from __future__ import annotations

from dbt.adapters.jammi.mutable_table import hive_adoption

CONVERSION = hive_adoption.HiveConversion(
    relation="s.customers",
    file_format="parquet",
    location="/wh/s.db/customers__jammi_abc",
    add_tenant=True,
)


def test_the_rewrite_creates_renames_aside_and_renames_in():
    create, aside, rename = CONVERSION.statements()
    assert create == (
        "create table s.customers__jammi_adopting using parquet\n"
        "location '/wh/s.db/customers__jammi_abc'\n"
        "tblproperties ('jammi.adopting_from' = 's.customers')\n"
        "as select *, cast(null as string) as `tenant_id` from s.customers"
    )
    assert aside == "alter table s.customers rename to s.customers__jammi_hive"
    assert rename == "alter table s.customers__jammi_adopting rename to customers"


def test_a_stored_tenant_column_is_kept_as_it_is():
    kept = hive_adoption.HiveConversion("s.c", "delta", "/x", add_tenant=False)
    assert kept.statements()[0].endswith("as select * from s.c")
    assert hive_adoption.stored_tenant([["id", "int"], ["TENANT_ID", "string"]])
    assert not hive_adoption.stored_tenant([["id", "int"]])


def test_the_new_location_is_beside_the_hive_files_never_among_them():
    assert hive_adoption.new_location("/wh/s.db/customers/", "r1") == "/wh/s.db/customers__jammi_r1"
    assert hive_adoption.location_of("orc", "/x") == "/x"
    assert hive_adoption.location_of("delta", "/x") is None


def test_a_stopped_rewrite_is_renamed_in_only_when_it_is_marked_for_the_table():
    marked = hive_adoption.is_marked_for({"jammi.adopting_from": "S.Customers"}, "s.customers")
    assert marked
    assert not hive_adoption.is_marked_for({"jammi.adopting_from": "s.other"}, "s.customers")
    assert hive_adoption.recovery_statements("s.customers", True, True) == [
        "alter table s.customers__jammi_adopting rename to customers"
    ]
    assert hive_adoption.recovery_statements("s.customers", True, False) == []
    assert hive_adoption.recovery_statements("s.customers", False, False) == []


def test_a_rewrite_left_beside_the_hive_table_is_dropped_and_made_again():
    assert hive_adoption.leftover_statements(True, True, "s.customers") == [
        "drop table s.customers__jammi_adopting"
    ]
    assert hive_adoption.leftover_statements(True, False, "s.customers") == []


class FakeCatalog:
    """The tables a run sees: names and their properties; every statement recorded."""

    def __init__(self, tables: dict[str, dict[str, str]]):
        self.tables = tables
        self.executed: list[str] = []

    def listed(self, relation: str) -> bool:
        return relation in self.tables

    def properties_of(self, relation: str) -> dict[str, str]:
        return self.tables[relation]


def test_recovery_renames_in_a_marked_copy_and_nothing_else():
    marked = FakeCatalog({"s.customers__jammi_adopting": {"jammi.adopting_from": "s.customers"}})
    assert hive_adoption.recover(
        "s.customers", marked.listed, marked.properties_of, marked.executed.append
    )
    assert marked.executed == ["alter table s.customers__jammi_adopting rename to customers"]
    foreign = FakeCatalog({"s.customers__jammi_adopting": {}})
    assert not hive_adoption.recover(
        "s.customers", foreign.listed, foreign.properties_of, foreign.executed.append
    )
    assert foreign.executed == []


def test_the_rewrite_drops_a_stopped_runs_copy_first():
    left = FakeCatalog({"s.customers__jammi_adopting": {"jammi.adopting_from": "s.customers"}})
    hive_adoption.convert(CONVERSION, left.listed, left.properties_of, left.executed.append)
    assert left.executed[0] == "drop table s.customers__jammi_adopting"
    assert left.executed[1:] == CONVERSION.statements()
    clean = FakeCatalog({})
    hive_adoption.convert(CONVERSION, clean.listed, clean.properties_of, clean.executed.append)
    assert clean.executed == CONVERSION.statements()
