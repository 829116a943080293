"""Which Delta Lake and Iceberg releases the lanes, hints and `make jars` pick."""

import pytest

from dbt.adapters.jammi.engine.jar_releases import (
    FETCHED_RELEASES,
    delta_release,
    iceberg_package_for,
    iceberg_packages_hint,
    iceberg_release,
    package_for,
    packages_hint,
    spark_line,
)


@pytest.mark.parametrize(
    "spark, package, folder",
    [
        ("3.5.7", "io.delta:delta-spark_2.12:3.3.3", "delta-spark3.5"),
        ("3.5.0-SNAPSHOT", "io.delta:delta-spark_2.12:3.3.3", "delta-spark3.5"),
        ("4.1.4", "io.delta:delta-spark_2.13:4.3.1", "delta-spark4.1"),
        ("4.1.0 abc123", "io.delta:delta-spark_2.13:4.3.1", "delta-spark4.1"),
    ],
)
def test_delta_release_per_spark_line(spark, package, folder):
    release = delta_release(spark)
    assert release is not None
    assert (release.package, release.jars_dir) == (package, folder)


def test_delta_jars_are_the_package_and_delta_storage():
    release = delta_release("3.5.7")
    assert release is not None
    assert release.jars == (release.package, "io.delta:delta-storage:3.3.3")


@pytest.mark.parametrize(
    "spark, package",
    [
        ("3.5.7", "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.12.0"),
        ("4.1.4", "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"),
    ],
)
def test_iceberg_runtime_per_spark_line(spark, package):
    release = iceberg_release(spark)
    assert release is not None
    assert release.jars == (package,)


@pytest.mark.parametrize("spark", ["4.3.0", "4.0.5", "3.4.1", "", "unknown"])
def test_no_delta_release_for_other_lines(spark):
    assert delta_release(spark) is None


def test_make_jars_fetches_each_release_with_a_cache_folder_once():
    folders = [r.jars_dir for r in FETCHED_RELEASES]
    assert folders == [
        "delta-spark4.1",
        "delta-spark3.5",
        "iceberg-spark4.1",
        "iceberg-spark3.5",
        "spark-connect3.5",
    ]


def test_spark_35_needs_the_connect_server_artifact_spark_4_bundles_it():
    from dbt.adapters.jammi.engine.jar_releases import connect_release

    release = connect_release("3.5.7")
    assert release is not None
    assert release.package == "org.apache.spark:spark-connect_2.12:3.5.7"
    assert connect_release("4.0.1") is None
    # Only the jar reaches the server (--jars beside PySpark's): its Spark dependencies
    # are not fetched, and the packages Spark resolves keep theirs.
    assert release.with_dependencies is False
    assert all(r.with_dependencies for r in FETCHED_RELEASES if r is not release)


def test_make_jars_asks_maven_for_the_jar_alone_where_the_release_says_so(tmp_path, monkeypatch):
    import subprocess

    import fetch_jars  # scripts/, on the path from tests/conftest.py

    commands = []
    monkeypatch.setattr(fetch_jars.shutil, "which", lambda name: "/usr/bin/mvn")
    monkeypatch.setattr(subprocess, "call", lambda command, **kw: commands.append(command) or 0)
    fetch_jars.maven_get("g:a:1", tmp_path / "mvn.log", with_dependencies=False)
    fetch_jars.maven_get("g:b:1", tmp_path / "mvn.log")
    assert "-Dtransitive=false" in commands[0]
    assert "-Dtransitive=true" in commands[1]


def test_spark_line_and_hint():
    assert spark_line("4.3.0") == "4.3"
    assert spark_line("x") == ""
    hint = packages_hint()
    assert "Spark 3.5: io.delta:delta-spark_2.12:3.3.3" in hint
    assert "Spark 4.1: io.delta:delta-spark_2.13:4.3.1" in hint
    assert "4.0" not in hint  # past its end of life: no release is offered


def test_package_for_falls_back_to_the_home_lines_release():
    assert package_for("4.0.5") == "io.delta:delta-spark_2.13:4.3.1"
    assert package_for("4.3.0") == "io.delta:delta-spark_2.13:4.3.1"
    assert package_for("3.5.7") == "io.delta:delta-spark_2.12:3.3.3"


def test_integration_projects_delta_profile_names_the_home_lines_release():
    from pathlib import Path

    profiles = Path(__file__).parents[3] / "integration_project" / "profiles.yml"
    default = f"env_var('JAMMI_DELTA_PACKAGES', '{package_for('4.1.4')}')"
    assert default in profiles.read_text()


def test_iceberg_coordinates_for_the_lane_and_the_hint():
    assert (
        iceberg_package_for("3.5.7") == "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.12.0"
    )
    assert iceberg_package_for("9.9.0") == iceberg_package_for("4.1.4")  # Spark's own error
    assert "Spark 4.1: org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0" in (
        iceberg_packages_hint()
    )
    assert "4.0" not in iceberg_packages_hint()


def test_make_jars_reads_the_jars_spark_ivy_could_not_fetch():
    import fetch_jars  # scripts/, on the path from tests/conftest.py

    output = (
        'Exception in thread "main" java.lang.RuntimeException: [download failed: '
        "org.slf4j#slf4j-api;2.0.13!slf4j-api.jar, download failed: "
        "commons-logging#commons-logging;1.3.0!commons-logging.jar]"
    )
    assert fetch_jars.ivy_missing(output) == [
        "commons-logging:commons-logging:1.3.0",
        "org.slf4j:slf4j-api:2.0.13",
    ]
    assert fetch_jars.ivy_missing(":: resolution report :: resolve 812ms") == []


def test_make_jars_fetches_what_ivy_lacks_until_it_resolves(tmp_path, monkeypatch):
    import fetch_jars

    release = delta_release("4.1.4")
    answers = [["org.slf4j:slf4j-api:2.0.13"], []]
    fetched = []
    monkeypatch.setattr(fetch_jars, "JARS_CACHE", tmp_path)
    monkeypatch.setattr(fetch_jars, "local_repository_jar", lambda c: tmp_path / "x.jar")
    (tmp_path / "x.jar").write_text("")
    monkeypatch.setattr(fetch_jars, "ivy_resolve", lambda package, log: answers.pop(0))
    monkeypatch.setattr(
        fetch_jars, "maven_get", lambda c, log, with_dependencies=True: fetched.append(c)
    )
    fetch_jars.fetch(release, tmp_path / "mvn.log")
    assert fetched == ["org.slf4j:slf4j-api:2.0.13"] and answers == []
