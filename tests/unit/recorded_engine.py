"""A statement runner for the Python protocols' unit tests, in place of Spark: it
answers each statement by the first answer whose prefix the statement starts with (an
exception is raised) and records every statement in order."""

from __future__ import annotations

from typing import Any


class RecordedEngine:
    """``strict``: a statement no answer matches fails the test (else it returns [])."""

    def __init__(self, answers: dict[str, Any] | None = None, strict: bool = False) -> None:
        self.answers = answers or {}
        self.strict = strict
        self.statements: list[str] = []

    def __call__(self, sql: str) -> Any:
        self.statements.append(sql)
        for prefix, answer in self.answers.items():
            if sql.startswith(prefix):
                if isinstance(answer, Exception):
                    raise answer
                return answer
        if self.strict:
            raise AssertionError(f"unexpected statement: {sql}")
        return []
