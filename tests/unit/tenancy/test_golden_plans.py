"""The tenant guard's text reader on plans real Spark printed: Spark 3.5 and Spark 4.3 on
parquet, Spark 3.5 and Spark 4.1 with Delta's and with Iceberg's catalogs (tests/capture_plans.py
captured them; tests/unit/tenancy/plan_cases.py says what each statement reads). The
guard's functional tests then run once per plan reader (the embedded lane: the JVM
reader; the Thrift lane: this one), not once per format and lane (docs/testing.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.jammi.tenancy.merge_operands import merge_operands
from dbt.adapters.jammi.tenancy.plan import unscoped_reads
from dbt.adapters.jammi.tenancy.plan_text import parse_plan, root_command
from dbt.adapters.jammi.tenancy.statement_plans import INLINE_MERGE
from tests.unit.tenancy.plan_cases import CASES, ENGINES, TENANT, is_tenant_table

PLANS = Path(__file__).resolve().parent / "plans"

CAPTURED = [
    pytest.param(folder, case, id=f"{folder}-{case.name}")
    for folder, _, file_format in ENGINES
    for case in CASES
    if file_format in case.formats
]


def reads(folder: str, name: str) -> list[str]:
    text = (PLANS / folder / f"{name}.txt").read_text()
    return unscoped_reads(parse_plan(text, TENANT), is_tenant_table)


@pytest.mark.parametrize("folder, case", CAPTURED)
def test_captured_plan_reads_what_the_statement_reads(folder, case):
    text = (PLANS / folder / f"{case.name}.txt").read_text()
    if root_command(text) == INLINE_MERGE:
        # Delta prints the MERGE on one line: the reader analyzes its two operands
        target, source = merge_operands(case.sql)
        assert target.startswith("d.sink") and "d.t" in source, (target, source)
        found = reads(folder, f"{case.name}.target") + reads(folder, f"{case.name}.source")
    else:
        found = unscoped_reads(parse_plan(text, TENANT), is_tenant_table)
    assert sorted(found) == sorted(case.unscoped), text


@pytest.mark.parametrize("folder", [folder for folder, _, _ in ENGINES])
def test_another_tenants_scope_is_not_this_runs(folder):
    text = (PLANS / folder / "scoped_read.txt").read_text()
    assert unscoped_reads(parse_plan(text, "globex"), is_tenant_table) == ["d.t"]


def test_every_engine_has_every_case_captured():
    for folder, _, file_format in ENGINES:
        captured = {path.name for path in (PLANS / folder).glob("*.txt")}
        wanted = {f"{case.name}.txt" for case in CASES if file_format in case.formats}
        assert wanted <= captured, (folder, sorted(wanted - captured))


@pytest.mark.parametrize("line", ["spark3.5", "spark4.1"])
def test_delta_prints_its_merge_inline_and_iceberg_as_a_tree(line):
    # why the reader has two paths for a MERGE (statement_plans._merge_plan), on each line
    assert root_command((PLANS / f"{line}-delta" / "merge.txt").read_text()) == INLINE_MERGE
    assert root_command((PLANS / f"{line}-iceberg" / "merge.txt").read_text()) != INLINE_MERGE
