"""Which Delta Lake release the lanes and hints pick for a Spark version."""

import pytest

from dbt.adapters.jammi.engine.delta_release import (
    delta_release,
    package_for,
    packages_hint,
    spark_line,
)


@pytest.mark.parametrize(
    "spark, package, folder",
    [
        ("3.5.7", "io.delta:delta-spark_2.12:3.2.1", "delta"),
        ("3.5.0-SNAPSHOT", "io.delta:delta-spark_2.12:3.2.1", "delta"),
        ("4.0.1", "io.delta:delta-spark_2.13:4.0.1", "delta-spark4"),
        ("4.0.5 abc123", "io.delta:delta-spark_2.13:4.0.1", "delta-spark4"),
        ("4.1.0", "io.delta:delta-spark_4.1_2.13:4.1.0", None),
    ],
)
def test_release_per_spark_line(spark, package, folder):
    release = delta_release(spark)
    assert release is not None
    assert (release.package, release.shared_jars_dir) == (package, folder)


@pytest.mark.parametrize("spark", ["4.3.0", "3.4.1", "", "unknown"])
def test_no_release_for_other_lines(spark):
    assert delta_release(spark) is None


def test_spark_line_and_hint():
    assert spark_line("4.3.0") == "4.3"
    assert spark_line("x") == ""
    hint = packages_hint()
    assert "Spark 3.5: io.delta:delta-spark_2.12:3.2.1" in hint
    assert "Spark 4.0: io.delta:delta-spark_2.13:4.0.1" in hint


def test_package_for_falls_back_to_spark_35s_release():
    assert package_for("4.0.5") == "io.delta:delta-spark_2.13:4.0.1"
    assert package_for("4.3.0") == "io.delta:delta-spark_2.12:3.2.1"
