"""Delta configured by Maven coordinates in the profile (`spark.jars.packages`), exactly
as README tells users, resolved from the local Maven repository that `make jars` fills.

A `dbt run` in its own process (Spark reads `spark.jars.packages` only when its JVM
starts) with an empty Ivy directory, so nothing can come from an earlier resolution, and
the JVM's HTTP(S) proxy set to a closed port on loopback, so nothing can come from the
network: every module Ivy reports must be "found ... in local-m2-cache", every jar it
copies must come from a file: URL, and the model must be a Delta table. Run by the
Delta lane (`make delta-lane`, scripts/delta_lane.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dbt.adapters.jammi.engine.jar_releases import installed_pyspark_version, package_for
from tests.conftest import jammi_profile_target, test_file_format, test_method

pytestmark = [
    pytest.mark.delta,
    pytest.mark.session_only,
    pytest.mark.skipif(
        test_file_format() != "delta" or test_method() != "session",
        reason="Delta by Maven coordinates on the embedded session (delta lane)",
    ),
]

# Port 9 (discard) on loopback: nothing listens, so any download attempt is refused.
NO_NETWORK = " ".join(
    f"-D{scheme}.proxyHost=127.0.0.1 -D{scheme}.proxyPort=9" for scheme in ("http", "https")
)
FOUND = re.compile(r"^\s*found (\S+) in (\S+)\s*$", re.MULTILINE)
DOWNLOADING = re.compile(r"^\s*downloading (\S+) \.\.\.\s*$", re.MULTILINE)
MODEL = "{{ config(materialized='table', file_format='delta') }}\nselect 1 as id\n"


def write_project(root: Path, package: str) -> None:
    target = jammi_profile_target()
    params = {k: v for k, v in target["server_side_parameters"].items() if k != "spark.jars"}
    params["spark.jars.packages"] = package
    params["spark.jars.ivy"] = str(root / "ivy")
    target.update(session_dir=str(root / "spark"), server_side_parameters=params)
    profile = {"jammi_maven": {"target": "dev", "outputs": {"dev": target}}}
    (root / "profiles.yml").write_text(yaml.safe_dump(profile))
    (root / "dbt_project.yml").write_text(
        "name: jammi_maven\nversion: '1.0'\nprofile: jammi_maven\nconfig-version: 2\n"
    )
    (root / "models").mkdir()
    (root / "models" / "delta_from_maven.sql").write_text(MODEL)


def test_delta_packages_resolve_from_the_local_maven_repository(tmp_path):
    package = package_for(installed_pyspark_version())
    write_project(tmp_path, package)
    dbt = str(Path(sys.executable).with_name("dbt"))
    env = dict(os.environ, SPARK_SUBMIT_OPTS=NO_NETWORK)
    run = subprocess.run(
        [dbt, "run", "--profiles-dir", str(tmp_path), "--project-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-4000:]

    resolvers = dict(FOUND.findall(output))
    group, artifact, version = package.split(":")
    assert resolvers.get(f"{group}#{artifact};{version}") == "local-m2-cache", output[-4000:]
    assert set(resolvers.values()) == {"local-m2-cache"}, resolvers
    sources = DOWNLOADING.findall(output)
    assert sources and all(source.startswith("file:") for source in sources), sources

    delta_logs = list((tmp_path / "spark" / "warehouse").glob("*/delta_from_maven/_delta_log"))
    assert delta_logs, f"no Delta table delta_from_maven under {tmp_path / 'spark'}"
