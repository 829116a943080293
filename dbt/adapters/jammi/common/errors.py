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
