"""What test_cluster_faults.py checks after each fault, and counts: a scenario's tally
(faults, old/new/mixed states, recoveries, how the faulted runs ended), and a parquet
mutable_table with a changelog whose batches tell its versions apart."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from tests.process.faults import (
    FaultedRun,
    FaultPoint,
    FaultRig,
    mutable_state,
    run_with_fault,
    statement_seconds,
)
from tests.process.harness import (
    DbtProject,
    DbtResult,
    changelog_problem,
    check,
    classify,
    first_line,
    is_clear_failure,
    report,
)

FAULT_ATTEMPTS = 2  # tries per fault point when the run ends before it
COMMIT = r"alter table \S+ set location"  # a parquet mutable_table's commit in dbt.log


def run_args(model: str, batch: int) -> list[str]:
    return ["run", "--select", model, "--vars", json.dumps({"batch": batch})]


@dataclass
class Tally:
    """One scenario's counts, and what went wrong."""

    counts: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)

    def outcome(self, run: FaultedRun, state: str, label: str, committed_ok: bool) -> None:
        """Count a faulted run: what a reader sees, and whether the run's own result
        agrees (a success committed; a failure is clear and, unless ``committed_ok``,
        left the old state)."""
        model = next(iter(run.result.models.values()), None)
        self.counts["faults"] += 1
        self.counts[state] += 1
        self.counts["lost work"] += run.lost_work
        self.counts["faults that lost work"] += run.lost_work > 0
        if state == "mixed":
            self.problems.append(f"{label}: a reader sees a mix of the old and the new state")
        if model is not None and model.ok:
            self.counts["run succeeded"] += 1
            if state != "new":
                self.problems.append(f"{label}: the run succeeded, the state is {state}")
            return
        self.counts["run failed"] += 1
        message = model.message if model is not None else run.result.output[-1500:]
        if is_clear_failure(message):
            self.counts["clear failures"] += 1
        else:
            self.problems.append(f"{label}: unclear failure: {first_line(message, 600)}")
        if state == "new" and not committed_ok:
            self.problems.append(f"{label}: the run failed but its batch was committed")

    def summary(self, scenario: str, points: tuple[FaultPoint, ...], extra: str = "") -> None:
        c = self.counts
        runs = f"{min(self.durations):.0f}-{max(self.durations):.0f}s"
        report(
            f"cluster {scenario}: faults={c['faults']} old={c['old']} new={c['new']} "
            f"mixed={c['mixed']} recovered={c['recovered']} runs-succeeded="
            f"{c['run succeeded']} runs-failed={c['run failed']} (clear: "
            f"{c['clear failures']}); {c['faults that lost work']} fault(s) lost running "
            f"tasks or map outputs ({c['lost work']} in all){extra} (normal runs {runs}; "
            f"faults at {', '.join(p.label for p in points)}; {c['outrun']} run(s) ended "
            "before their fault point and were retried)"
        )


def fault_next_run(
    rig: FaultRig,
    project: DbtProject,
    model: str,
    batch: int,
    normal: DbtResult,
    tally: Tally,
    point: FaultPoint,
    tag: str,
    fault: Optional[Callable[[], None]] = None,
    worker: Optional[int] = None,
) -> tuple[Optional[FaultedRun], int, DbtResult]:
    """Runs of ``model``'s next batches with a fault at ``point`` (run_with_fault) until
    one is faulted: a run that ended before its point applied its batch as a normal run
    and becomes the measure, and the next try fires earlier. Returns the faulted run
    (None when every try ended first), its batch and the last normal run."""
    for attempt in range(FAULT_ATTEMPTS):
        batch += 1
        earlier = replace(point, fraction=point.fraction * 0.85**attempt)
        args, run_tag = run_args(model, batch), f"{tag}-{attempt}"
        run = run_with_fault(rig, project, args, run_tag, earlier, normal, fault, worker)
        if run.fired_at is not None:
            return run, batch, normal
        check(run.result, f"{tag}: the run that ended before its fault point")
        normal = run.result
        tally.durations.append(normal.seconds)
        tally.counts["outrun"] += 1
    tally.problems.append(f"{tag}: every run ended before its fault point")
    return None, batch, normal


@dataclass
class MutableTable:
    """A parquet mutable_table with `changelog: true` whose batch b holds base_rows +
    b * growth keys, all with batch = b; its current batch, and its last normal run
    (fault points are timed from it)."""

    project: DbtProject
    schema: str
    model: str
    base_rows: int
    growth: int
    batch: int = 0
    normal: Optional[DbtResult] = None

    def expected(self, batch: int) -> list[list[int]]:
        rows = self.base_rows + batch * self.growth
        return [[batch, rows, rows]]

    def run(self, tag: str) -> DbtResult:
        return self.project.run(run_args(self.model, self.batch), tag)

    def build(self, batches: int) -> None:
        """Normal runs of the first ``batches`` batches; the last one is measured."""
        for _ in range(batches):
            self.batch += 1
            self.normal = self.run(f"{self.model}-{self.batch}")
            check(self.normal, f"{self.model}: batch {self.batch}")

    def state(self, rig: FaultRig) -> dict:
        return mutable_state(rig.sql, self.schema, self.model)

    def changelog_problem(self, state: dict, lagged: bool) -> Optional[str]:
        """Each committed version in the changelog once, complete (with ``lagged`` the
        last may be unpublished yet), one registration, every offset's events of the
        offset's own table version."""
        problem = changelog_problem(state, lagged, self.base_rows, self.growth)
        if problem or state["changelog_registrations"] != 1:
            return problem or f"{state['changelog_registrations']} changelog registrations"
        wrong = [v for v in state["offset_versions"] if not v[0] == v[1] == v[2]]
        return f"offsets holding other versions' events: {wrong}" if wrong else None

    def fault(
        self,
        rig: FaultRig,
        tally: Tally,
        point: FaultPoint,
        tag: str,
        fault: Optional[Callable[[], None]] = None,
        worker: Optional[int] = None,
    ) -> Optional[FaultedRun]:
        """The next batch's run with a fault at ``point`` (fault_next_run)."""
        assert self.normal is not None, "build() the table first"
        run, self.batch, self.normal = fault_next_run(
            rig, self.project, self.model, self.batch, self.normal, tally, point, tag,
            fault, worker,
        )  # fmt: skip
        return run

    def check_after_fault(
        self, rig: FaultRig, tally: Tally, run: FaultedRun, label: str, lagged: bool
    ) -> None:
        """The old or the new batch, never a mix; the changelog as changelog_problem
        wants it (``lagged``: the fault may have fallen after the commit)."""
        state = self.state(rig)
        observed = classify(
            state["items"], self.expected(self.batch - 1), self.expected(self.batch)
        )
        tally.outcome(run, observed, label, committed_ok=lagged)
        if observed == "mixed":
            tally.problems.append(f"{label}: the table holds {state['items']}")
        problem = self.changelog_problem(state, lagged)
        if problem:
            tally.problems.append(f"{label}: changelog after the fault: {problem}")
        elif len(state["changes"]) < (state["version"] or 0):
            tally.counts["changelog lagged"] += 1

    def recover(self, rig: FaultRig, tally: Tally, label: str, tag: str) -> Optional[str]:
        """The next run of the same batch must converge to it, its changelog complete.
        Returns the recovery run's failure message when it failed (counted by the
        caller), else None."""
        recovery = self.run(f"{tag}-recovery")
        outcome = recovery.model(self.model)
        if not outcome.ok:
            return outcome.message or "(no message)"
        if statement_seconds(recovery.log(), COMMIT) is not None:  # it did the whole work
            self.normal = recovery
            tally.durations.append(recovery.seconds)
        final = self.state(rig)
        problem = self.changelog_problem(final, lagged=False)
        if final["items"] != self.expected(self.batch):
            tally.problems.append(f"{label}: after recovery the table holds {final['items']}")
        elif problem:
            tally.problems.append(f"{label}: changelog after recovery: {problem}")
        else:
            tally.counts["recovered"] += 1
        return None
