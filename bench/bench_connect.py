"""The fixed cost of one 10-row `mutable_table` run over Spark Connect against the same
run over a Spark Thrift Server. Both servers run in local mode on loopback from the
installed PySpark's jars (scripts/connect_server.py, scripts/spark_thrift_server.py);
dbt runs in this process. The model is built once over each, then ROUNDS rounds run it
over each connection in one dbt invocation each, alternating which goes first; the
figure is the median of dbt's execution time, and the ratio is connect / thrift. Run:
    .venv/bin/python bench/bench_connect.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from harness import PROJECT, dbt_run, report

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from connect_server import ConnectServer  # noqa: E402
from spark_thrift_server import ThriftServer  # noqa: E402

PROFILE = """
bench:
  target: thrift
  outputs:
    thrift:
      type: jammi
      method: thrift
      host: {thrift_host}
      port: {thrift_port}
      user: bench
      schema: bench
      threads: 1
    connect:
      type: jammi
      method: connect
      host: "{connect_url}"
      schema: bench
      threads: 1
      connect_timeout: 30
"""

MODEL = (
    "{{ config(materialized='mutable_table', file_format='parquet', primary_key=['id']) }}\n"
    "select id, concat('item-', id) as name, id * 10 as price from range(10) as t(id)\n"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", help="ignored: the fixed cost is measured at 10 rows")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="jammi-bench-connect-"))
    thrift = ThriftServer(state_dir=workdir / "thrift")
    connect = ConnectServer(state_dir=workdir / "connect")
    try:
        thrift.start()
        connect.start()
        project = workdir / "project"
        (project / "models").mkdir(parents=True)
        (project / "profiles.yml").write_text(
            PROFILE.format(
                thrift_host=thrift.host, thrift_port=thrift.port, connect_url=connect.url
            )
        )
        (project / "dbt_project.yml").write_text(PROJECT.format(name="bench_connect"))
        (project / "models" / "items.sql").write_text(MODEL)
        times: dict[str, list[float]] = {"connect": [], "thrift": []}
        counts: dict[str, int] = {}
        for target in times:
            dbt_run(project, "run", "--target", target)  # create the table, warm the server
        for round_number in range(args.rounds):
            order = ("connect", "thrift") if round_number % 2 == 0 else ("thrift", "connect")
            for target in order:
                run = dbt_run(project, "run", "--target", target)
                times[target].append(run.execution)
                counts[target] = len(run.statements)
        ours, baseline = statistics.median(times["connect"]), statistics.median(times["thrift"])
        print(f"connect: {sorted(round(t, 2) for t in times['connect'])}")
        print(f"thrift:  {sorted(round(t, 2) for t in times['thrift'])}")
        report(
            "connect_fixed_cost",
            10,
            ours,
            baseline,
            "a run over Spark Connect costs about what it costs over Thrift",
            statements_connect=counts["connect"],
            statements_thrift=counts["thrift"],
        )
    finally:
        connect.stop()
        thrift.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
