"""Bytes on disk of one parquet mutable_table after many runs over a Thrift server.

Over thrift the adapter has no file system client; before kept versions existed every
run left a full copy of the table behind. This runs ``dbt run`` RUNS times (each run
updates a slice of the rows, so each commit writes a complete new version) against the
Thrift server named by JAMMI_THRIFT_HOST / JAMMI_THRIFT_PORT, whose warehouse is on this
machine's disk, and prints the size of the table's directory and its version count.

    python scripts/thrift_server.py run --local -- \\
        python bench/bench_version_storage.py --runs 50 --rows 100000

Which dbt-jammi is measured is whichever one ``import dbt.adapters.jammi`` finds
(set PYTHONPATH to a checkout to measure that one).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.process.harness import DbtProject, ThriftSql  # noqa: E402

MODEL = """
{{{{ config(materialized='mutable_table', primary_key=['id'], file_format='parquet'
            {versions_kept}) }}}}
select id, concat('payload-', id, '-', {{{{ var('run', 0) }}}}) as label,
       id * {{{{ var('run', 0) }}}} as amount
from range({rows}) as r
where id % 10 = {{{{ var('run', 0) }}}} % 10 or {{{{ var('run', 0) }}}} = 0
"""


def directory_bytes(path: Path) -> tuple[int, int]:
    total, versions = 0, 0
    for child in path.iterdir():
        if child.is_dir() and child.name.startswith("v"):
            versions += 1
    for root, _, files in os.walk(path):
        total += sum((Path(root) / f).stat().st_size for f in files)
    return total, versions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--versions-kept", type=int, default=None)
    parser.add_argument("--schema", default="bench_storage")
    args = parser.parse_args()
    host = os.environ.get("JAMMI_THRIFT_HOST", "127.0.0.1")
    port = int(os.environ.get("JAMMI_THRIFT_PORT", "10000"))
    kept = f", versions_kept={args.versions_kept}" if args.versions_kept else ""
    target = {"type": "jammi", "method": "thrift", "host": host, "port": port}
    target.update({"schema": args.schema, "threads": 1, "connect_retries": 3})
    root = Path(tempfile.mkdtemp(prefix="jammi-storage-"))
    project = DbtProject(
        root, target, models={"stored.sql": MODEL.format(rows=args.rows, versions_kept=kept)}
    ).write()
    sql = ThriftSql(host, port)
    sql.execute(f"drop schema if exists {args.schema} cascade")
    for run in range(args.runs):
        result = project.run(["run", "--vars", f"{{run: {run}}}"], f"run{run}")
        if result.returncode != 0:
            raise SystemExit(f"run {run} failed:\n{result.output[-3000:]}")
    location = next(
        r[1]
        for r in sql.rows(f"describe table extended {args.schema}.stored")
        if r[0] == "Location"
    )
    base = Path(location.replace("file:", "", 1)).parent
    total, versions = directory_bytes(base)
    one = sum(
        f.stat().st_size for f in Path(location.replace("file:", "", 1)).iterdir() if f.is_file()
    )
    print(
        f"runs={args.runs} rows={args.rows} version_dirs={versions} table_bytes={total} "
        f"one_version_bytes={one} copies={total / one:.1f}"
    )


if __name__ == "__main__":
    main()
