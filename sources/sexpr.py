"""A minimal s-expression reader (PDDL/BDDL): text -> nested lists of atoms."""
from __future__ import annotations

import re

SExpr = str | list["SExpr"]
_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_COMMENT = re.compile(r";[^\n]*")


def parse(text: str) -> list[SExpr]:
    """All top-level expressions of `text`; `;` comments are ignored.

    Raises ValueError on unbalanced parentheses.
    """
    stack: list[list[SExpr]] = [[]]
    for token in _TOKEN.findall(_COMMENT.sub(" ", text)):
        if token == "(":
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise ValueError("unbalanced parentheses: unexpected ')'")
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(token)
    if len(stack) != 1:
        raise ValueError(f"unbalanced parentheses: {len(stack) - 1} '(' not closed")
    return stack[0]


def to_text(expr: SExpr) -> str:
    """An expression back on one line: ``(ontop a b)``."""
    if isinstance(expr, str):
        return expr
    return "(" + " ".join(to_text(e) for e in expr) + ")"
