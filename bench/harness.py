"""What the dbt-driven benchmarks share: a throwaway dbt project on the embedded session
(one JVM for dbt and the baselines) and an in-process dbt runner that reports times."""

from __future__ import annotations

import time
from pathlib import Path

PROFILE = """
bench:
  target: dev
  outputs:
    dev:
      type: jammi
      method: session
      host: localhost
      schema: bench
      threads: 1
      session_dir: {state}
      server_side_parameters:
        spark.master: "local[2]"
        spark.driver.memory: "2g"
        spark.sql.shuffle.partitions: "8"
"""

PROJECT = """
name: {name}
version: "1.0"
config-version: 2
profile: bench
model-paths: ["models"]
"""


def write_project(
    project: Path, name: str, state: Path, parameters: dict[str, str] | None = None
) -> None:
    """profiles.yml and dbt_project.yml of a benchmark project; `parameters` are added
    to the session's server_side_parameters (e.g. Delta's jars and settings)."""
    extra = "".join(f'        {k}: "{v}"\n' for k, v in (parameters or {}).items())
    (project / "profiles.yml").write_text(PROFILE.format(state=state) + extra)
    (project / "dbt_project.yml").write_text(PROJECT.format(name=name))


def dbt(project: Path, *args: str) -> tuple[float, float]:
    """Run dbt in-process; returns (wall seconds, the models' execution seconds)."""
    from dbt.cli.main import dbtRunner

    start = time.perf_counter()
    result = dbtRunner().invoke(
        [*args, "--project-dir", str(project), "--profiles-dir", str(project), "--quiet"]
    )
    wall = time.perf_counter() - start
    if not result.success:
        raise SystemExit(f"dbt {' '.join(args)} failed: {result.exception}")
    results = getattr(result.result, "results", [])
    return wall, sum(r.execution_time for r in results)
