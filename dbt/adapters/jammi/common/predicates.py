"""SQL predicates a user hands the adapter (``delete_when``, later ``topic_events(where=)``).

A predicate is spliced into generated SQL, so it must be exactly ONE boolean
expression: no statement separator, no comment that could swallow the SQL after it,
no unbalanced parentheses that could close the adapter's own, and no subquery (a
subquery can read another relation, e.g. another tenant's rows). The check parses the
text with sqlglot's Spark dialect rather than matching patterns, so a ``;`` or ``--``
inside a string literal is just text.
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from dbt.adapters.jammi.common.errors import JammiValidationError

_DIALECT = sqlglot.Dialect.get_or_raise("spark")

# Functions that call into the JVM: a way out of the expression, refused like subqueries.
_FORBIDDEN_FUNCTIONS = frozenset({"reflect", "java_method", "try_reflect"})


def validate_predicate(sql: Any, model: str, option: str) -> str:
    """Return ``sql`` unchanged if it is one SQL boolean expression safe to splice.

    ``model`` names the model in the error (e.g. ``mutable_table 'orders'``), ``option``
    the config or argument that holds the predicate (e.g. ``delete_when``).
    """
    example = f"set {option} to one boolean expression such as \"op = 'd'\""
    if not isinstance(sql, str) or not sql.strip():
        raise JammiValidationError(
            model, f"'{option}' must be a SQL predicate string, got {sql!r}", example
        )
    try:
        tokens = _DIALECT.tokenize(sql)
    except TokenError as exc:
        raise JammiValidationError(model, f"'{option}' is not valid SQL ({exc})", example) from None
    if any(token.token_type == TokenType.SEMICOLON for token in tokens):
        raise JammiValidationError(
            model,
            f"'{option}' contains ';': it must be a single boolean expression, not statements",
            f"remove the ';' from {option} (inside a quoted string it is allowed)",
        )
    if any(token.comments for token in tokens):
        raise JammiValidationError(
            model,
            f"'{option}' contains a SQL comment ('--' or '/* */'), which could hide the "
            "SQL the adapter puts after it",
            f"remove the comment from {option}",
        )
    try:
        trees = [tree for tree in _DIALECT.parser().parse(tokens, sql) if tree is not None]
    except ParseError as exc:
        detail = exc.errors[0] if exc.errors else {}
        where = f" at column {detail['col']}" if "col" in detail else ""
        description = detail.get("description", "it does not parse")
        raise JammiValidationError(
            model,
            f"'{option}' is not one SQL expression{where}: {description} "
            "(check that parentheses and quotes are balanced)",
            example,
        ) from None
    if len(trees) != 1 or not isinstance(trees[0], exp.Condition):
        raise JammiValidationError(
            model,
            f"'{option}' must be one boolean expression, not a statement or a list (got {sql!r})",
            example,
        )
    tree = trees[0]
    if tree.find(exp.Query, exp.Subquery, exp.Table) is not None:
        raise JammiValidationError(
            model,
            f"'{option}' contains a subquery; a predicate may only use the model's own "
            "columns (a subquery could read other relations, e.g. another tenant's rows)",
            f"compute what you need as a column in the model's select and refer to it in {option}",
        )
    for func in tree.find_all(exp.Func):
        name = (func.name if isinstance(func, exp.Anonymous) else func.sql_name()).lower()
        if name in _FORBIDDEN_FUNCTIONS:
            raise JammiValidationError(
                model,
                f"'{option}' calls {name}(), which runs arbitrary JVM code",
                f"remove {name}() from {option}",
            )
    return sql
