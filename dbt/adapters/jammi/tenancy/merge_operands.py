"""The target and the source of a ``MERGE INTO`` statement, as the text the user wrote.

Over ``thrift``, ``http`` and ``odbc`` the tenant guard reads a statement's analyzed plan
from ``EXPLAIN EXTENDED`` (``plan_text``). Delta prints its ``MergeIntoCommand`` on one
line, with the source and the target plans inline rather than as a tree, so the reads
of a MERGE cannot be found in that text. The guard then analyzes the two operands on
their own: ``select * from <target>`` and ``select * from <source>``, each cut out of
the statement at its own characters (no re-rendering). Delta refuses subqueries in a
MERGE's conditions and actions, so the operands are all a MERGE reads.
"""

from __future__ import annotations

import sqlglot
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

_DIALECT = sqlglot.Dialect.get_or_raise("spark")


class MergeOperandsError(ValueError):
    """The statement is not a ``MERGE INTO <target> USING <source> ON ...``."""


def merge_operands(sql: str) -> tuple[str, str]:
    """``merge into d.t x using (select ...) s on ...`` -> ``("d.t x", "(select ...) s")``."""
    try:
        tokens = _DIALECT.tokenize(sql)
    except TokenError as exc:
        raise MergeOperandsError(f"the MERGE statement cannot be tokenized: {exc}") from None
    types = [token.token_type for token in tokens[:2]]
    if types != [TokenType.MERGE, TokenType.INTO]:
        raise MergeOperandsError("the statement does not start with MERGE INTO")
    using = _top_level(tokens, 2, TokenType.USING)
    on = _top_level(tokens, using + 1, TokenType.ON)
    if using == 2 or on == using + 1:
        raise MergeOperandsError("the MERGE statement has an empty target or source")
    return _text(sql, tokens, 2, using), _text(sql, tokens, using + 1, on)


def _top_level(tokens: list[Token], start: int, wanted: TokenType) -> int:
    """Index of the first ``wanted`` token at parenthesis depth 0 from ``start``."""
    depth = 0
    for index in range(start, len(tokens)):
        kind = tokens[index].token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
        elif kind == wanted and depth == 0:
            return index
    raise MergeOperandsError(f"the MERGE statement has no {wanted.name} clause")


def _text(sql: str, tokens: list[Token], first: int, stop: int) -> str:
    """The statement's characters from token ``first`` up to (not including) ``stop``."""
    return sql[tokens[first].start : tokens[stop - 1].end + 1].strip()
