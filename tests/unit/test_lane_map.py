"""scripts/lane_map.py: every product file reaches a lane, every gate slice names tests
that exist, and the paths the docs name go to the lanes that test them."""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import Path

import lane_map  # scripts/ (tests/conftest.py puts it on sys.path)
import pytest

REPO = Path(lane_map.__file__).resolve().parent.parent


def tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return [path for path in listed if (REPO / path).is_file()]


def product_files() -> list[str]:
    """What a change can touch that some lane must test: all but the docs."""
    return [
        path
        for path in tracked_files()
        if not any(fnmatch.fnmatch(path, pattern) for pattern in lane_map.NO_LANE)
    ]


def make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text()
    return set(re.findall(r"^([a-z0-9][a-z0-9-]*):", text, flags=re.MULTILINE))


def test_every_product_file_is_named_by_a_rule():
    files = product_files()
    assert len(files) > 100, files  # the listing worked
    unnamed = [path for path in files if not lane_map.rules_for(path)]
    assert unnamed == [], f"add a PATH_RULES entry for: {unnamed}"


def test_every_product_file_reaches_a_lane_of_the_full_matrix():
    for path in product_files():
        lanes = lane_map.lanes_for([path])
        assert lanes and set(lanes) <= set(lane_map.EVERY_NAMED_LANE), (path, lanes)
        # only lint's and the unit tests' own files, the benchmarks, the docs' browser
        # check and the by-hand jaffle_shop check need no Spark lane
        spark_lanes = set(lanes) - {"checks"}
        assert spark_lanes or path.startswith(
            ("tests/unit/", "tests/capture_plans.py", "bench/", "scripts/browser/",
             "scripts/docs_lineage_check.py",
             "scripts/lane_map.py", "scripts/race_repeats.py", "scripts/house_metrics.py",
             "scripts/jaffle_shop_check.py")
        ), path  # fmt: skip


def test_the_named_lanes_are_the_full_matrix_and_the_cluster_lanes():
    assert set(lane_map.EVERY_NAMED_LANE) == {*lane_map.FULL_LANES, *lane_map.ON_ONE_CLUSTER}
    assert len(lane_map.EVERY_NAMED_LANE) == len(set(lane_map.EVERY_NAMED_LANE))


def test_rules_name_only_lanes_of_the_full_matrix():
    named = {lane for _, lanes in lane_map.PATH_RULES for lane in lanes}
    assert named - set(lane_map.EVERY_NAMED_LANE) == set()
    assert set(lane_map.DEFAULT_LANES) <= set(lane_map.FULL_LANES)


def test_every_lane_is_a_make_target():
    targets = make_targets()
    lanes = (*lane_map.EVERY_NAMED_LANE, *lane_map.GATE_LANES)
    missing = [lane for lane in lanes if lane not in targets]
    assert missing == []


@pytest.mark.parametrize("name", sorted(lane_map.SLICES))
def test_no_slice_is_empty_and_each_test_exists(name):
    entries = lane_map.SLICES[name]
    assert entries, f"slice {name} names no test"
    for entry in entries:
        path, *names = entry.split("::")
        target = REPO / path
        assert target.exists(), entry
        if target.is_dir():
            assert list(target.glob("test_*.py")), entry
            continue
        source = target.read_text()
        for part in names:
            found = re.search(rf"^\s*(class|def) {re.escape(part)}\b", source, re.MULTILINE)
            assert found, f"{entry}: no {part} in {path}"


def test_the_functional_files_left_to_the_full_matrix_exist():
    assert lane_map.FUNCTIONAL_FULL_ONLY
    for path in lane_map.FUNCTIONAL_FULL_ONLY:
        assert (REPO / path).is_file(), path
        assert path.startswith("tests/functional/"), path


def test_the_orc_slice_runs_only_files_whose_classes_take_the_rewrite_format():
    for path in lane_map.FULL_SLICES["orc"]:
        assert "MutableProjectBase" in (REPO / path).read_text(), path


def test_each_slice_setting_is_read_by_its_tests():
    for name, settings in lane_map.GATE_SLICE_ENV.items():
        sources = " ".join(
            (REPO / entry.split("::")[0]).read_text() for entry in lane_map.GATE_SLICES[name]
        )
        for variable in settings:
            assert variable in sources, f"slice {name}: no test reads {variable}"


@pytest.mark.parametrize(
    "path, needed",
    [
        ("dbt/adapters/jammi/mutable_table/commit/merge_commit.py", {"delta-lane", "iceberg-lane"}),
        (
            "dbt/include/jammi/macros/mutable_table/merge_batch.sql",
            {"delta-lane", "iceberg-lane", "thrift-delta-lane"},
        ),
        ("dbt/adapters/jammi/tenancy/plan_text.py", {"cluster-lanes", "connect-lane"}),
        (
            "dbt/adapters/jammi/mutable_table/commit/rewrite_commit.py",
            {"crash-lane", "cluster-lanes"},  # the Thrift and fault lanes, one cluster
        ),
        ("dbt/adapters/jammi/mutable_table/commit/ownership.py", {"crash-lane"}),
        ("Makefile", set(lane_map.FULL_LANES)),
        ("tests/conftest.py", set(lane_map.FULL_LANES)),
        ("scripts/test_lanes.py", set(lane_map.FULL_LANES)),
        ("scripts/thrift_lane.py", {"cluster-lanes"}),
        ("tests/process/test_rollback_race.py", {"thrift-lane"}),
        ("scripts/connect_server.py", {"connect-lane", "spark43-lane"}),
    ],
)
def test_a_path_goes_to_the_lanes_that_test_it(path, needed):
    assert needed <= set(lane_map.lanes_for([path]))


def test_an_unnamed_product_file_runs_functional_and_delta():
    lanes = lane_map.lanes_for(["dbt/adapters/jammi/a_new_module.py"])
    assert lane_map.rules_for("dbt/adapters/jammi/a_new_module.py") == []
    assert lanes == ["delta-lane", "functional", "checks"]


def test_docs_alone_need_no_lane():
    assert lane_map.lanes_for(["README.md", "docs/testing.md", "CHANGELOG.md"]) == []


def test_one_cluster_lane_alone_runs_alone():
    assert lane_map.lanes_for(["scripts/spark_cluster.py"]) == ["cluster-lanes", "checks"]
    assert lane_map.lanes_for(["dbt/adapters/jammi/engine/hive_compat.py"]) == [
        "spark35-lane",
        "thrift-lane",
        "functional",
        "spark43-lane",
        "checks",
    ]


def test_the_delta_and_iceberg_gate_slices_follow_the_spark_line():
    assert lane_map.gate_slice_name("delta", "4.1.4") == "delta"
    assert lane_map.gate_slice_name("iceberg", "4.1.4") == "iceberg"
    assert lane_map.gate_slice_name("delta", "3.5.7") == "spark35-delta"
    assert lane_map.gate_slice_name("iceberg", "3.5.7") == "spark35-iceberg"
    assert {"spark35-delta", "spark35-iceberg", "spark35-smoke"} <= set(lane_map.GATE_SLICES)


def test_lanes_come_in_the_full_matrix_order():
    lanes = lane_map.lanes_for(["scripts/iceberg_lane.py", "scripts/delta_lane.py"])
    assert lanes == ["delta-lane", "iceberg-lane", "checks"]
