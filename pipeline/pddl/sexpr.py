"""A minimal s-expression reader for PDDL and BDDL text, keeping line numbers (comments skipped)."""

from __future__ import annotations

import re

_TOKEN = re.compile(r";[^\n]*|\(|\)|[^\s()]+|\n")


class SList(list):
    """A parenthesised list of tokens and lists, with the line it starts on."""

    line: int = 0


class Token(str):
    """A word of the text, with the line it is on."""

    line: int = 0

    def __new__(cls, text: str, line: int = 0) -> Token:
        token = super().__new__(cls, text)
        token.line = line
        return token


SExpr = str | SList


def parse(text: str) -> list[SExpr]:
    """All top-level expressions of `text`. Raises ValueError (with the line) when unbalanced."""
    line = 1
    stack: list[SList] = []
    top: list[SExpr] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token.startswith(";"):
            continue
        elif token == "(":
            node = SList()
            node.line = line
            (stack[-1] if stack else top).append(node)
            stack.append(node)
        elif token == ")":
            if not stack:
                raise ValueError(f"line {line}: unbalanced parentheses: unexpected ')'")
            stack.pop()
        else:
            (stack[-1] if stack else top).append(Token(token, line))
    if stack:
        raise ValueError(f"line {stack[-1].line}: unbalanced parentheses: {len(stack)} '(' not closed")
    return top


def unbalanced(text: str) -> tuple[int, str] | None:
    """Where the parentheses of `text` go wrong, as (line, message), or None when they balance.

    A missing ')' is reported where its group opens, not where a reader gives up: an open group
    is probably the unclosed one when a later line starts at its indentation or less while it is
    still open (a new sibling, e.g. the next action, began inside it).
    """
    open_groups: list[tuple[int, int]] = []  # (line, column) of each open '('
    suspect: int | None = None
    line, line_start, first_on_line, last_line = 1, 0, True, 1
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            line, line_start, first_on_line = line + 1, match.end(), True
            continue
        if token.startswith(";"):
            continue
        last_line = line
        column = match.start() - line_start
        if first_on_line and token == "(" and suspect is None:
            deeper = [opened for opened, col in open_groups if col >= column]
            if deeper:
                suspect = deeper[-1]
        first_on_line = False
        if token == "(":
            open_groups.append((line, column))
        elif token == ")":
            if not open_groups:
                return line, f"line {line}: unbalanced parentheses: a ')' closes nothing"
            open_groups.pop()
    if not open_groups:
        return None
    ending = f"the text ends on line {last_line} with {len(open_groups)} group(s) open"
    if suspect is not None:
        return suspect, (
            f"line {suspect}: unbalanced parentheses: the '(' on line {suspect} is probably never closed "
            f"(a later line starts at its indentation or less while it is open; {ending})"
        )
    innermost = open_groups[-1][0]
    return innermost, f"line {innermost}: unbalanced parentheses: the '(' opened on line {innermost} is never closed ({ending})"


def to_text(expr: SExpr | list) -> str:
    """An expression back on one line: `(ontop a b)`."""
    if isinstance(expr, str):
        return expr
    return "(" + " ".join(to_text(e) for e in expr) + ")"
