"""Paired, alternating rounds: how a benchmark compares our side with its baseline in one
process (docs/performance.md, "How a ratio is measured").

- Warm-up rounds run both sides first and are discarded: the JVM's first runs of a
  statement's code are slower, whichever side runs them.
- Then the side that runs first alternates, round by round. Running first costs a side
  more than the gaps the benchmarks chase, so each round is combined with the next one,
  in which the other side ran first, by the geometric mean of their two ratios: the
  cost of running first is in one ratio's numerator and the other's denominator, and
  cancels.
- A figure is the median of those pairs, with their spread (lowest and highest pair),
  pooled over every process that ran the benchmark (bench/run_all.py, --processes).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

OURS = "ours"
BASELINE = "baseline"


@dataclass(frozen=True)
class Round:
    """One round: each side's seconds, and which side ran first."""

    first: str
    ours: float
    baseline: float

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline


def pair_ratios(rounds: Sequence[Round]) -> list[float]:
    """Rounds taken two by two, each pair's sides run first once each: the geometric
    mean of the pair's two ratios."""
    if len(rounds) % 2:
        raise ValueError(f"paired rounds come in twos, not {len(rounds)}")
    pairs = []
    for one, other in zip(rounds[0::2], rounds[1::2]):
        if one.first == other.first:
            raise ValueError(f"a pair whose rounds both ran {one.first} first")
        pairs.append(math.sqrt(one.ratio * other.ratio))
    return pairs


def first_cost(rounds: Sequence[Round], side: str) -> float:
    """How much slower ``side`` is when it runs first: the median of its seconds in the
    rounds it ran first over the median in those it ran second."""
    seconds = {True: [], False: []}  # type: dict[bool, list[float]]
    for one in rounds:
        seconds[one.first == side].append(one.ours if side == OURS else one.baseline)
    if not seconds[True] or not seconds[False]:
        raise ValueError(f"{side} never ran both first and second")
    return statistics.median(seconds[True]) / statistics.median(seconds[False])


@dataclass(frozen=True)
class PairedFigure:
    """The median of the pair ratios, with their spread."""

    pairs: tuple[float, ...]

    @classmethod
    def pooled(cls, *pair_lists: Sequence[float]) -> PairedFigure:
        pairs = tuple(p for pairs in pair_lists for p in pairs)
        if not pairs:
            raise ValueError("no pairs to pool")
        return cls(pairs)

    @property
    def median(self) -> float:
        return statistics.median(self.pairs)

    @property
    def spread(self) -> tuple[float, float]:
        return min(self.pairs), max(self.pairs)

    def describe(self) -> str:
        low, high = self.spread
        return f"{self.median:.2f}x ({low:.2f}-{high:.2f}, {len(self.pairs)} pairs)"


def run_rounds(
    rounds: int,
    prepare: Callable[[int], None],
    run_side: Callable[[str, int], float],
    warmup: int = 1,
) -> list[Round]:
    """``warmup`` discarded rounds, then ``rounds`` (an even number) measured ones, the
    side that runs first alternating from ours. Round ``n`` (from 1; warm-ups are
    numbered first) calls ``prepare(n)``, then ``run_side(side, n)`` for each side in
    its order, which returns that side's seconds."""
    if rounds < 2 or rounds % 2:
        raise ValueError(f"the measured rounds must be an even number >= 2, not {rounds}")
    measured: list[Round] = []
    for number in range(1, warmup + rounds + 1):
        prepare(number)
        index = number - warmup - 1
        order = (OURS, BASELINE) if index < 0 or index % 2 == 0 else (BASELINE, OURS)
        seconds = {side: run_side(side, number) for side in order}
        if index >= 0:
            measured.append(Round(order[0], seconds[OURS], seconds[BASELINE]))
    return measured
