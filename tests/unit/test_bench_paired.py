"""bench/paired.py, without Spark: the order of the rounds, the pairs that cancel the
cost of running first, and the pooled figure."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import paired  # noqa: E402
from paired import BASELINE, OURS, PairedFigure, Round  # noqa: E402


def fake_sides(ours: float, baseline: float, first_penalty: float):
    """A side's seconds: its own, times ``first_penalty`` when it runs first."""
    calls: list[tuple[int, str]] = []

    def run_side(side: str, number: int) -> float:
        first = not calls or calls[-1][0] != number
        calls.append((number, side))
        seconds = ours if side == OURS else baseline
        return seconds * (first_penalty if first else 1.0)

    return calls, run_side


def test_warm_ups_are_discarded_and_the_first_side_alternates():
    calls, run_side = fake_sides(2.0, 1.0, 1.0)
    prepared: list[int] = []
    rounds = paired.run_rounds(4, prepared.append, run_side, warmup=1)
    assert prepared == [1, 2, 3, 4, 5]
    assert [first for first in (r.first for r in rounds)] == [OURS, BASELINE, OURS, BASELINE]
    assert calls[:2] == [(1, OURS), (1, BASELINE)]
    assert calls[2:4] == [(2, OURS), (2, BASELINE)]
    assert calls[4:6] == [(3, BASELINE), (3, OURS)]


def test_pairs_cancel_the_cost_of_running_first():
    _, run_side = fake_sides(1.2, 1.0, 1.3)
    rounds = paired.run_rounds(6, lambda n: None, run_side)
    # each round alone reads 1.2 * 1.3 = 1.56 or 1.2 / 1.3 = 0.92
    assert {round(r.ratio, 2) for r in rounds} == {1.56, 0.92}
    assert [round(p, 6) for p in paired.pair_ratios(rounds)] == [1.2, 1.2, 1.2]
    assert paired.first_cost(rounds, OURS) == pytest.approx(1.3)
    assert paired.first_cost(rounds, BASELINE) == pytest.approx(1.3)


def test_rounds_that_do_not_alternate_cannot_be_paired():
    with pytest.raises(ValueError, match="both ran ours first"):
        paired.pair_ratios([Round(OURS, 1, 1), Round(OURS, 1, 1)])
    with pytest.raises(ValueError, match="come in twos"):
        paired.pair_ratios([Round(OURS, 1, 1)])
    with pytest.raises(ValueError, match="even number"):
        paired.run_rounds(3, lambda n: None, lambda s, n: 1.0)


def test_the_figure_pools_every_process_and_gives_its_spread():
    figure = PairedFigure.pooled([1.1, 1.3], [1.0, 1.2, 1.25])
    assert figure.median == 1.2
    assert figure.spread == (1.0, 1.3)
    assert figure.describe() == "1.20x (1.00-1.30, 5 pairs)"
    with pytest.raises(ValueError):
        PairedFigure.pooled([], [])


def test_run_all_pools_each_benchmarks_pairs_over_its_processes():
    import run_all

    one = {"benchmark": "delta 1pct", "rows": 10, "ours": 2.0, "baseline": 1.0, "pairs": [1.1]}
    two = {**one, "ours": 4.0, "baseline": 3.0, "pairs": [1.3, 1.2]}
    plain = {"benchmark": "topic", "rows": 10, "ours": 1.0, "baseline": 1.0, "ratio": 1.0}
    merged = run_all.pooled([one, plain, two])
    assert merged[0]["pairs"] == [1.1, 1.3, 1.2]
    assert (merged[0]["processes"], merged[0]["ratio"]) == (2, 1.2)
    assert (merged[0]["ours"], merged[0]["baseline"]) == (3.0, 2.0)
    assert merged[1] == plain
    assert "1.20x (1.10-1.30, 3 pairs)" in run_all.table([{**merged[0], "goal": "<= 1.0x"}])
