"""Benchmark: what the tenant read guard adds per model in a run bound to a tenant.

The same bound `dbt run` of N models (table, view and incremental models and
mutable_tables, all reading a mutable table through tenant_scoped()) runs with the guard
on and with the guard switched off in-process (the baseline), alternating, in one JVM.
Prints the median wall time of each, the added seconds per model, the ratio
(guarded / baseline), and how many statements the guard analyzed and how many catalog
lookups it made (one per tenant-scoped table per run: the answer is cached). Run:
    .venv/bin/python bench/bench_tenant_guard.py [--models 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from harness import dbt, write_project

PRICES = """
{{ config(materialized='mutable_table', primary_key=['sku']) }}
select concat('sku-', id) as sku, id % 100 as price from range(10000)
"""

KINDS = [
    "{{ config(materialized='table') }}",
    "{{ config(materialized='view') }}",
    "{{ config(materialized='incremental') }}",
    "{{ config(materialized='mutable_table', primary_key=['sku']) }}",
]

READER = """{config}
select sku, price + {n} as price from {{{{ tenant_scoped(ref('prices')) }}}}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")

    work = Path(tempfile.mkdtemp(prefix="jammi-bench-guard-"))
    project = work / "project"
    models = project / "models"
    models.mkdir(parents=True)
    write_project(project, "bench_guard", work / "spark")
    (models / "prices.sql").write_text(PRICES)
    for n in range(args.models):
        config = KINDS[n % len(KINDS)]
        (models / f"reader_{n}.sql").write_text(READER.format(config=config, n=n))

    from dbt.adapters.jammi.tenancy.guard import TenantGuard

    bound = ["--vars", json.dumps({"jammi_tenant": "acme"})]
    original = TenantGuard.needs_check
    counts = {"statements": 0, "lookups": 0}
    # every decision of tenancy/bound_statement.py (a statement, or its rewrite) is one
    # TenantGuard.unscoped call
    original_check = TenantGuard.unscoped

    def counting_check(self, plan, table_properties):  # type: ignore[no-untyped-def]
        before = self.table_lookups
        try:
            return original_check(self, plan, table_properties)
        finally:
            counts["statements"] += 1
            counts["lookups"] += self.table_lookups - before

    try:
        dbt(project, "run", "-s", "prices", *bound)
        dbt(project, "run", *bound)  # warm: every reader exists, the JVM is warm
        guarded, baseline = [], []
        for _ in range(args.repeat):
            TenantGuard.unscoped = counting_check  # type: ignore[method-assign]
            counts.update(statements=0, lookups=0)
            guarded.append(dbt(project, "run", "-s", "reader_*", *bound)[0])
            per_run = dict(counts)
            TenantGuard.unscoped = original_check  # type: ignore[method-assign]
            TenantGuard.needs_check = lambda self, sql, name: False  # type: ignore[method-assign]
            baseline.append(dbt(project, "run", "-s", "reader_*", *bound)[0])
            TenantGuard.needs_check = original  # type: ignore[method-assign]
        ours, base = statistics.median(guarded), statistics.median(baseline)
        print(f"models: {args.models} (table, view, incremental, mutable_table), bound run")
        print(f"guard on: {ours:.2f}s  off (baseline): {base:.2f}s (median of {args.repeat})")
        print(f"added per model: {(ours - base) / args.models * 1000:.0f} ms")
        print(f"ratio guarded / baseline: {ours / base:.2f}x")
        print(
            f"statements analyzed per run: {per_run['statements']} "
            f"({per_run['statements'] / args.models:.1f} per model); "
            f"catalog lookups per run: {per_run['lookups']}"
        )
    finally:
        TenantGuard.needs_check = original  # type: ignore[method-assign]
        TenantGuard.unscoped = original_check  # type: ignore[method-assign]
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
