"""Errors raised by the definition layer before any SQL runs."""

from __future__ import annotations

from dbt_common.exceptions import DbtValidationError


class JammiValidationError(DbtValidationError):
    """A model's definition breaks a rule; the message names the model, the offending
    column or option, and the fix."""

    def __init__(self, subject: str, problem: str, fix: str) -> None:
        self.subject = subject
        self.problem = problem
        self.fix = fix
        super().__init__(f"{subject}: {problem}\n  Fix: {fix}")


# A refusal the adapter raises inside a Spark statement (Spark's raise_error, e.g. a
# merge function's sum that its stored type cannot hold): the connection shows the text
# between the markers, not Spark's error around it (connections.py).
REFUSAL_MARKER = "jammi_refused<<"
REFUSAL_END = ">>"


def refusal_message(error_text: str) -> str | None:
    """The refusal a statement raised (the text between the markers), or None."""
    at = error_text.find(REFUSAL_MARKER)
    if at < 0:
        return None
    rest = error_text[at + len(REFUSAL_MARKER) :]
    end = rest.find(REFUSAL_END)
    return rest[:end] if end >= 0 else rest.splitlines()[0]
