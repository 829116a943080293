"""Follow a topic as it grows: ``python -m dbt.adapters.jammi.topic.tail <topic name>``.

Prints each new event as one JSON line as soon as its publish commits; ``follow()`` is
the same as a generator for scripts and notebooks, yielding the events of each poll as
one list. Every read goes through dbt itself (``dbt show`` over the project's profile,
target and vars), so the tail sees what a model of that project would: the same
connection, the same tenant binding (``--vars '{jammi_tenant: acme}'`` or the profile's
``tenant``) and the tenant read guard. docs/tail.md
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.predicates import validate_predicate
from dbt.adapters.jammi.common.validation import sql_string_literal, validate_topic_name

SUBJECT = "tail"


class TailError(RuntimeError):
    """A read of the tail failed; the message is dbt's."""


@dataclass
class DbtReader:
    """Runs ``dbt show --inline`` with one parsed manifest (parsed once, reused)."""

    project_dir: str = "."
    profiles_dir: Optional[str] = None
    target: Optional[str] = None
    vars: dict[str, Any] = field(default_factory=dict)
    _runner: Any = None

    def _args(self) -> list[str]:
        args = ["--project-dir", self.project_dir]
        if self.profiles_dir:
            args += ["--profiles-dir", self.profiles_dir]
        if self.target:
            args += ["--target", self.target]
        if self.vars:
            args += ["--vars", json.dumps(self.vars)]
        return args

    def _invoke(self, runner: Any, command: list[str]) -> Any:
        result = runner.invoke([*command, *self._args(), "--log-level", "none"])
        if not result.success:
            message = str(result.exception or "")
            if not message and result.result is not None:
                message = "; ".join(str(r.message) for r in result.result.results if r.message)
            raise TailError(message or "dbt failed")
        return result.result

    def query(self, sql: str) -> list[dict[str, Any]]:
        from dbt.cli.main import dbtRunner

        if self._runner is None:
            manifest = self._invoke(dbtRunner(), ["parse"])
            self._runner = dbtRunner(manifest=manifest)
        result = self._invoke(self._runner, ["show", "--inline", sql, "--limit", "-1"])
        table = result.results[0].agate_table
        names = list(table.column_names)
        return [dict(zip(names, row)) for row in table.rows]


def _macro_args(*values: Any) -> str:
    """Jinja literals for the macro call (strings as SQL-safe quoted text)."""
    rendered = []
    for value in values:
        if value is None:
            rendered.append("none")
        elif isinstance(value, int):
            rendered.append(str(value))
        else:
            rendered.append(sql_string_literal(str(value)))
    return ", ".join(rendered)


def follow(
    topic: str,
    where: Optional[str] = None,
    from_offset: Optional[int] = None,
    *,
    schema: Optional[str] = None,
    project_dir: str = ".",
    profiles_dir: Optional[str] = None,
    target: Optional[str] = None,
    vars: Optional[dict[str, Any]] = None,
    poll_seconds: float = 1.0,
    idle_timeout: Optional[float] = None,
    reader: Optional[DbtReader] = None,
) -> Iterator[list[dict[str, Any]]]:
    """Yield the new events of ``topic`` (its registered name, e.g. ``cdc.orders``), one
    list per poll that found some, in offset order. Starts after the current high-water
    mark, or at ``from_offset`` (events already stored from there are yielded first).
    ``where`` is one SQL predicate over the topic's columns. Stops when no event came
    for ``idle_timeout`` seconds (never, by default)."""
    validate_topic_name(topic, SUBJECT)
    if where is not None:
        where = validate_predicate(where, SUBJECT, "--where")
    if from_offset is not None and (isinstance(from_offset, bool) or from_offset < 1):
        raise JammiValidationError(SUBJECT, f"--from-offset {from_offset!r}", "offsets start at 1")
    reader = reader or DbtReader(project_dir, profiles_dir, target, dict(vars or {}))
    if from_offset is None:
        sql = "{{ jammi_tail_high_water_sql(" + _macro_args(topic, schema) + ") }}"
        after = int(reader.query(sql)[0]["high_water"])
    else:
        after = from_offset - 1
    idle_since = time.monotonic()
    while True:
        sql = "{{ jammi_tail_events_sql(" + _macro_args(topic, after, where, schema) + ") }}"
        events = sorted(reader.query(sql), key=lambda e: (e["_offset"], e["_row_idx"]))
        if events:
            after = int(events[-1]["_offset"])
            idle_since = time.monotonic()
            yield events
            continue
        if idle_timeout is not None and time.monotonic() - idle_since >= idle_timeout:
            return
        time.sleep(poll_seconds)


def _json_line(event: dict[str, Any]) -> str:
    return json.dumps(event, default=str, sort_keys=False)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dbt.adapters.jammi.topic.tail",
        description="Print a topic's new events as JSON lines as they are published.",
    )
    parser.add_argument("topic", help="the topic's name, e.g. cdc.orders")
    parser.add_argument("--where", help="SQL predicate over the topic's columns")
    parser.add_argument("--from-offset", type=int, help="start at this offset (default: new)")
    parser.add_argument("--schema", help="schema of the topics registry (default: target's)")
    parser.add_argument("--project-dir", default=".")
    parser.add_argument("--profiles-dir")
    parser.add_argument("--target")
    parser.add_argument("--vars", help="dbt vars as JSON/YAML, e.g. '{jammi_tenant: acme}'")
    parser.add_argument("--poll-seconds", type=float, default=1.0)
    parser.add_argument("--idle-exit", type=float, help="exit after this many idle seconds")
    parser.add_argument("--max-events", type=int, help="exit after printing this many")
    args = parser.parse_args(argv)

    import yaml  # type: ignore[import-untyped]

    variables = yaml.safe_load(args.vars) if args.vars else {}
    printed = 0
    try:
        for events in follow(
            args.topic,
            args.where,
            args.from_offset,
            schema=args.schema,
            project_dir=args.project_dir,
            profiles_dir=args.profiles_dir,
            target=args.target,
            vars=variables,
            poll_seconds=args.poll_seconds,
            idle_timeout=args.idle_exit,
        ):
            for event in events:
                print(_json_line(event), flush=True)
                printed += 1
                if args.max_events is not None and printed >= args.max_events:
                    return 0
    except (JammiValidationError, TailError) as exc:
        print(f"tail: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
