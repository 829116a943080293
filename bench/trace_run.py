"""Follow one mutable_table run as a maintainer would read it: which macros it renders
(and in which files), which adapter methods the macros call, and which of dbt-jammi's
Python modules run (the measure of the face's size in docs/architecture.md).

The run: a Delta (or, with ``--format``, parquet or Iceberg) mutable_table with
``version_column`` and ``delete_when``, on an existing table: a first run creates it, the
traced second run applies a batch with an update, an insert and a delete. dbt runs in
this process; the trace wraps dbt's macro calls (``MacroGenerator.__call__``), the
``adapter`` object the macros see (``RuntimeDatabaseWrapper.__getattr__``) and, with a
profiler, the calls into ``dbt/adapters/jammi``. A switch is a macro calling into one
of dbt-jammi's adapter methods, or that method returning to the macro: two per call.

    .venv/bin/python bench/trace_run.py [--format delta|parquet|iceberg] [--json out.json]
        [--flow docs/flow/mutable_table_delta.md]

``--flow`` also writes the run as a flow page (bench/run_flow.py): the macros in call
order, nested, with the Python each enters.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from harness import dbt_run, write_project  # noqa: E402
from run_flow import FlowRecorder, markdown  # noqa: E402

JAMMI_PACKAGE = "dbt_jammi"
# the lookups of the package's read-only mappings (mutable_table/run_definition.py): each
# read of a definition's key would be a line of its own
MAPPING_PROTOCOL = frozenset({"__getitem__", "__iter__", "__len__", "__contains__"})
JAMMI_SOURCE = str(Path(__file__).resolve().parent.parent / "dbt" / "adapters" / "jammi")

MODEL = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='FORMAT',
          version_column='ver', delete_when="op = 'd'") }}
select * from (values {{ var('rows') }}) as t(id, ver, op, label)
"""
FIRST = "(1, 1, '', 'a'), (2, 1, '', 'b'), (3, 1, '', 'c')"
TRACED = "(1, 2, '', 'a2'), (2, 2, 'd', ''), (4, 1, '', 'd')"


@dataclass
class Trace:
    """What the traced run crossed, in call order."""

    macros: list[tuple[str, str]] = field(default_factory=list)  # (name, file)
    adapter_calls: list[tuple[str, bool]] = field(default_factory=list)  # (name, jammi's)
    modules: set[str] = field(default_factory=set)
    flow: FlowRecorder = field(default_factory=FlowRecorder)


def summary(trace: Trace) -> dict:
    """The counts the architecture doc reports: dbt-jammi's macros and their files,
    adapter calls (all, and into dbt-jammi's methods), distinct names, Python modules
    and the Jinja <-> Python switches."""
    ours = [(name, path) for name, path in trace.macros if path]
    jammi_calls = [name for name, jammi in trace.adapter_calls if jammi]
    return {
        "jammi_macros": len({name for name, _ in ours}),
        "jammi_macro_files": len({path for _, path in ours}),
        "macro_calls": len(ours),
        "adapter_calls": len(trace.adapter_calls),
        "jammi_adapter_calls": len(jammi_calls),
        "distinct_jammi_adapter_methods": len(set(jammi_calls)),
        "python_modules": len(trace.modules),
        "switches": 2 * len(jammi_calls),
        "most_called": Counter(jammi_calls).most_common(5),
    }


def is_jammi_method(adapter: object, name: str) -> bool:
    """Whether the adapter's ``name`` is defined in dbt-jammi (not dbt-spark or dbt)."""
    for klass in type(adapter).__mro__:
        if name in vars(klass):
            return klass.__module__.startswith("dbt.adapters.jammi")
    return False


def module_of(filename: str) -> str | None:
    """``dbt/adapters/jammi/x/y.py`` -> ``x/y``; None outside dbt-jammi's package."""
    if not filename.startswith(JAMMI_SOURCE):
        return None
    return filename[len(JAMMI_SOURCE) + 1 :].removesuffix(".py")


@contextmanager
def traced(trace: Trace) -> Iterator[None]:
    """Install the wrappers for the duration of the traced run."""
    from dbt.clients.jinja import MacroGenerator
    from dbt.context.providers import RuntimeDatabaseWrapper

    call, getattr_ = MacroGenerator.__call__, RuntimeDatabaseWrapper.__getattr__

    def macro_call(self, *args, **kwargs):
        macro = self.macro
        ours = getattr(macro, "package_name", "") == JAMMI_PACKAGE
        path = macro.original_file_path if ours else ""
        trace.macros.append((macro.name, path))
        trace.flow.enter_macro(macro.name, path)
        try:
            return call(self, *args, **kwargs)
        finally:
            trace.flow.leave_macro()

    def adapter_attribute(self, name):
        found = getattr_(self, name)
        if not callable(found):
            return found
        jammi = is_jammi_method(self._adapter, name)

        def recorded(*args, **kwargs):
            trace.adapter_calls.append((name, jammi))
            return found(*args, **kwargs)

        return recorded

    def profile(frame, event, _arg):
        if event not in ("call", "return") or frame.f_code.co_name in MAPPING_PROTOCOL:
            return
        module = module_of(frame.f_code.co_filename)
        if not module:
            return
        if event == "call":
            trace.modules.add(module)
            trace.flow.enter_python(module, frame.f_code.co_qualname)
        else:
            trace.flow.leave_python()

    MacroGenerator.__call__ = macro_call
    RuntimeDatabaseWrapper.__getattr__ = adapter_attribute
    # dbt runs each model in a worker thread: the hook goes on every thread started now
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        MacroGenerator.__call__, RuntimeDatabaseWrapper.__getattr__ = call, getattr_


def session_settings(file_format: str) -> dict[str, str]:
    from tests.conftest import session_parameters  # the lanes' Delta/Iceberg settings

    return {} if file_format == "parquet" else session_parameters(file_format)


def flow_preface(file_format: str) -> str:
    model = MODEL.replace("FORMAT", file_format).strip()
    return f"""Written by `bench/trace_run.py --format {file_format} --flow`; do not edit by hand.
The model, on an existing table (a first run made it with {FIRST}):

```sql
{model}
```

The traced run applies {TRACED}: an update, a delete and an insert. Each line is a macro
(dbt-jammi's with its file under `dbt/include/jammi/macros/`, or dbt's and dbt-spark's),
or a Python function of `dbt/adapters/jammi/` that it enters, nested by who calls whom
(a read-only mapping's own lookups, such as `RunDefinition.__getitem__`, left out)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", default="delta", choices=("delta", "parquet", "iceberg"))
    parser.add_argument("--json", default=None, help="write the summary and the trace here")
    parser.add_argument("--flow", default=None, help="write the run's flow page here")
    parser.add_argument(
        "--python-depth", type=int, default=5, help="levels of dbt-jammi Python in the flow"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        project = work / "project"
        (project / "models").mkdir(parents=True)
        (project / "models" / "traced.sql").write_text(MODEL.replace("FORMAT", args.format))
        write_project(project, "trace", work / "spark", session_settings(args.format))
        dbt_run(project, "run", "-s", "traced", "--vars", json.dumps({"rows": FIRST}))
        trace = Trace(flow=FlowRecorder(python_depth=args.python_depth))
        with traced(trace):
            dbt_run(project, "run", "-s", "traced", "--vars", json.dumps({"rows": TRACED}))
    result = summary(trace)
    for key, value in result.items():
        print(f"{key}: {value}")
    if args.flow:
        title = f"A mutable_table run on {args.format}, from the materialization to the commit"
        Path(args.flow).write_text(markdown(trace.flow.steps, title, flow_preface(args.format)))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    **result,
                    "macros": trace.macros,
                    "adapter_calls": trace.adapter_calls,
                    "modules": sorted(trace.modules),
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
