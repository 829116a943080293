"""scripts/race_repeats.py's reading of a repetition: the process tests' summary lines,
pytest's outcome line, and the summed table (`make race-repeats`, docs/testing.md)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPTS = Path(__file__).parents[2] / "scripts"


def load_race_repeats():
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location("race_repeats", SCRIPTS / "race_repeats.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


race_repeats = load_race_repeats()

RACE = (
    "race mutable_table upserts with changelog (iceberg): rounds=3 successes=5 "
    "clean failures=1 unclear failures=0 re-plans=2 lost updates=0 earlier commits lost=0 "
    "tables dropped=0 changelog problems=1"
)
CLUSTER = (
    "cluster worker kill: faults=2 old=1 new=1 mixed=0 recovered=2 runs-succeeded=1 "
    "runs-failed=1 (clear: 1); 0 fault(s) lost running tasks or map outputs (0 in all)"
)
OUTPUT = f"""
..                                                                       [100%]
=========================== process test summary ============================
{RACE}
{CLUSTER}
race first_race_1 a: failed cleanly: the table was created by another run

slowest files (seconds)
  84.3  tests/process/test_thrift_races.py
2 passed, 1 failed in 84.31s (0:01:24)
"""


def test_a_summary_line_gives_its_scenario_and_every_count():
    scenario, counts = race_repeats.summary_counts(RACE)
    assert scenario == "race mutable_table upserts with changelog (iceberg)"
    assert counts["successes"] == 5
    assert counts["clean failures"] == 1
    assert counts["re-plans"] == 2
    assert counts["changelog problems"] == 1
    assert counts["earlier commits lost"] == 0


def test_a_fault_line_keeps_its_hyphenated_and_parenthesised_counts():
    _, counts = race_repeats.summary_counts(CLUSTER)
    assert counts["runs-failed"] == 1
    assert counts["runs-succeeded"] == 1
    assert counts["mixed"] == 0


def test_the_summary_section_and_the_outcome_line_are_read_from_pytest_output():
    assert race_repeats.summary_lines(OUTPUT) == [RACE, CLUSTER]
    assert race_repeats.pytest_outcomes(OUTPUT) == {"passed": 2, "failed": 1}
    assert race_repeats.summary_lines("1 passed in 2.0s") == []


def test_the_table_sums_each_scenario_over_the_repetitions(tmp_path):
    record = {"label": "thrift iceberg", "exit": 1, "seconds": 60, "summary": [RACE]}
    lines = [
        dict(record, repetition=1, outcomes={"passed": 2, "failed": 1}),
        dict(record, repetition=2, outcomes={"passed": 3}, exit=0),
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    table = race_repeats.tally(path)
    row = next(line for line in table.splitlines() if line.startswith("| thrift iceberg"))
    assert "| 2 | 5 / 1 | 2.0 |" in row
    assert "successes=10" in row and "changelog problems=2" in row and "re-plans=4" in row
    assert "lost updates=0" in row  # a count that stayed 0 is shown
