"""One traced run as a flow: the macros in the order they render, nested as they call
each other, and under each the dbt-jammi Python it enters (the adapter method, and the
package's functions that method calls, to ``python_depth`` levels). Only what runs inside
the materialization macro (``root``) is recorded: dbt's start and finish are left out.
bench/trace_run.py records it (``--flow out.md``); docs/flow/ holds the pages it wrote.

Consecutive equal steps are written once with their count (``×3``); Python's
comprehensions and generator expressions are left out, and so is PLUMBING: the helpers
every phase calls (quoting, the adapter's type), which say nothing about the flow.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

PLUMBING = frozenset(
    {
        "quote_identifier",
        "sql_string_literal",
        "JammiAdapter.type",
        "JammiAdapter.quote_column",
        "QuotedNames.__missing__",
        "planner_rules",
        "TenantGuardAdapterMixin.tenant_guard",
        "SqlSession.tenant_guard",
        "TenantGuard.trusted",
        "StatementsMixin.sql_session",
        "StatementsMixin._execute_trusted",
        "SqlSession.trusted",
        "JammiConnectionManager.trusted_statements",
        "hands_to.<locals>.face",  # the face's one-line hand-over (common/face.py)
    }
)


@dataclass(frozen=True)
class FlowStep:
    depth: int
    kind: str  # "macro" (dbt-jammi's), "dbt macro" (dbt's or dbt-spark's), "python"
    name: str
    where: str  # the macro's file, or the Python function's module


@dataclass
class FlowRecorder:
    """Filled by bench/trace_run.py's wrappers and profile hook, in call order."""

    root: str = "materialization_mutable_table"
    python_depth: int = 5
    steps: list[FlowStep] = field(default_factory=list)
    _local: threading.local = field(default_factory=threading.local)

    def _state(self) -> threading.local:
        if not hasattr(self._local, "macros"):
            self._local.macros = 0  # macro frames open on this thread
            self._local.python = []  # open dbt-jammi Python frames: shown in the flow?
            self._local.base = None  # the macro depth of the root, while inside it
        return self._local

    def enter_macro(self, name: str, path: str) -> None:
        state = self._state()
        if state.base is None and name.startswith(self.root):
            state.base = state.macros
        if state.base is not None:
            kind = "macro" if path else "dbt macro"
            self.steps.append(FlowStep(state.macros - state.base, kind, name, path))
        state.macros += 1

    def leave_macro(self) -> None:
        state = self._state()
        state.macros -= 1
        if state.base is not None and state.macros == state.base:
            state.base = None

    def enter_python(self, module: str, qualname: str) -> None:
        """A frame of dbt-jammi's opens; plumbing and comprehensions are neither shown
        nor counted as a level, so their callees nest under the caller that is shown."""
        state = self._state()
        level = sum(state.python)
        shown = (
            state.base is not None
            and level < self.python_depth
            and qualname not in PLUMBING
            and not qualname.split(".")[-1].startswith("<")
        )
        state.python.append(shown)
        if shown:
            self.steps.append(
                FlowStep(state.macros - state.base + level, "python", qualname, module)
            )

    def leave_python(self) -> None:
        state = self._state()
        if state.python:
            state.python.pop()


def collapsed(steps: list[FlowStep]) -> list[tuple[FlowStep, int]]:
    """Runs of equal consecutive steps as (step, count)."""
    runs: list[tuple[FlowStep, int]] = []
    for step in steps:
        if runs and runs[-1][0] == step:
            runs[-1] = (step, runs[-1][1] + 1)
        else:
            runs.append((step, 1))
    return runs


def markdown(steps: list[FlowStep], title: str, preface: str) -> str:
    """The flow as a nested Markdown list under ``title``."""
    lines = [f"# {title}", "", preface.strip(), ""]
    for step, count in collapsed(steps):
        times = f" ×{count}" if count > 1 else ""
        if step.kind == "python":
            text = f"`{step.name}` ({step.where}.py)"
        elif step.kind == "macro":
            text = f"macro `{step.name}` ({step.where.removeprefix('macros/')})"
        else:
            text = f"dbt's macro `{step.name}`"
        lines.append(f"{'  ' * step.depth}- {text}{times}")
    return "\n".join(lines) + "\n"
