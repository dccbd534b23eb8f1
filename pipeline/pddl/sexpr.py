"""A minimal s-expression reader for PDDL and BDDL text, keeping line numbers (comments skipped).

Bounded: parentheses nested deeper than the `nesting` limit stop the read (so no recursive code
that walks the result can run out of stack), and a long read checks the check's time limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from safeforge.common.limits import beyond, check_time, current_limits

_TOKEN = re.compile(r";[^\n]*|\(|\)|[^\s()\ufeff]+|\n")
_SECTION = re.compile(r"\([ \t]*:")  # a list that opens with a `:keyword`: a section of a define
_TIME_CHECK_EVERY = 4096  # tokens


class SExprError(ValueError):
    """Text that is not a readable s-expression; `line` (and `column`, from 1) is where, `message` what is wrong."""

    def __init__(self, line: int, message: str, column: int | None = None) -> None:
        super().__init__(f"line {line}: {message}")
        self.line, self.message, self.column = line, message, column


class SList(list):
    """A parenthesised list of words and lists, with the line it starts on."""

    __slots__ = ("line",)

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.line = 0


class Token(str):
    """A word on another line than the list holding it starts on, with its line (a word on the
    same line is a plain string, shared by all its occurrences: that line is its list's)."""

    line: int = 0

    def __new__(cls, text: str, line: int = 0) -> Token:
        token = super().__new__(cls, text)
        token.line = line
        return token


SExpr = str | SList
Source = str | list[SExpr]  # PDDL text, or the expressions `parse` made of it (a file is parsed once per check)


def parse(text: str) -> list[SExpr]:
    """All top-level expressions of `text` (a byte-order mark is ignored). Raises SExprError (with
    the line) when unbalanced or nested beyond the `nesting` limit."""
    depth_limit = current_limits().nesting
    line = 1
    stack: list[SList] = []
    top: list[SExpr] = []
    words: dict[str, str] = {}  # one object per distinct word on its list's line: memory follows the vocabulary
    for count, match in enumerate(_TOKEN.finditer(text)):
        if count % _TIME_CHECK_EVERY == 0:
            check_time()
        token = match.group()
        if token == "\n":
            line += 1
        elif token.startswith(";"):
            continue
        elif token == "(":
            if len(stack) >= depth_limit:
                raise SExprError(line, beyond("nesting", f"parentheses nested more than {depth_limit} deep"))
            node = SList()
            node.line = line
            (stack[-1] if stack else top).append(node)
            stack.append(node)
        elif token == ")":
            if not stack:
                raise SExprError(line, "unbalanced parentheses: unexpected ')'")
            stack.pop()
        elif stack and stack[-1].line == line:
            stack[-1].append(words.setdefault(token, token))
        else:
            (stack[-1] if stack else top).append(Token(token, line))
    if stack:
        raise SExprError(stack[-1].line, f"unbalanced parentheses: {len(stack)} '(' not closed")
    return top


@dataclass
class Recovered:
    """What `parse_recovering` read of a text: the expressions, every syntax error, and the
    keywords of the sections dropped for an error in them."""

    expressions: list[SExpr]
    errors: list[SExprError]
    dropped: list[str]


def _placed_tokens(text: str) -> Iterator[tuple[str, int, int, int, bool]]:
    """(token, offset, line, column from 1, whether it starts its line) of each token of `text`,
    comments and line breaks aside; the time limit is checked as it goes."""
    line, line_start, first_on_line = 1, 0, True
    for count, match in enumerate(_TOKEN.finditer(text)):
        if count % _TIME_CHECK_EVERY == 0:
            check_time()
        token = match.group()
        if token == "\n":
            line, line_start, first_on_line = line + 1, match.end(), True
        elif token[0] != ";":
            yield token, match.start(), line, match.start() - line_start + 1, first_on_line
            first_on_line = False


def parse_recovering(text: str) -> Recovered:
    """The expressions of a text whose parentheses do not balance, going on after each syntax error.

    A section (a list opening with a `:keyword`) still open when the next one starts is dropped
    with its error, placed at the group a later line starts left of (as `unbalanced` does), else at
    the innermost open one; one nested beyond the `nesting` limit is dropped too. A section closed
    early (words or lists follow it inside the top-level list) is dropped, the rest skipped until
    the next section; a top-level list closed before a later section is reopened; a ')' that
    closes nothing is skipped.
    """
    depth_limit = current_limits().nesting
    stack: list[SList] = []
    columns: list[int] = []  # the column of each open '('
    top: list[SExpr] = []
    found = Recovered(top, [], [])
    closed: tuple[int, int] | None = None  # (line, column) of the ')' that closed the last top-level list
    section_closed: tuple[int, int, SList] | None = None  # (line, column, section) of the last section's ')'
    suspect: tuple[int, int] | None = None  # the first open group a later line of its section starts left of
    outdented: tuple[int, int] | None = None  # the last group closed by a ')' starting a line left of it
    skipping = False  # inside a dropped section, until the next one starts

    def fail(where: tuple[int, int], message: str, unbalanced: bool = True) -> None:
        found.errors.append(SExprError(where[0], f"unbalanced parentheses: {message}" if unbalanced else message, where[1]))

    def drop(section: SList) -> None:
        define = stack[0] if stack else top[-1]
        if isinstance(define, SList) and define and define[-1] is section:
            define.pop()
        found.dropped.append(str(section[0]).lower() if section and isinstance(section[0], str) else "")
        del stack[1:], columns[1:]

    def too_many(closing: tuple[int, int, SList], token: str, line: int) -> None:
        fail(closing[:2], f"a ')' too many: the section opened on line {closing[2].line} closes here, before {token!r} on line {line}")
        drop(closing[2])

    for token, offset, line, column, starts_line in _placed_tokens(text):
        if token == "(":
            section = _SECTION.match(text, offset)
            if section:
                skipping = False
                if len(stack) > 1:
                    where = suspect or (stack[-1].line, columns[-1])
                    fail(where, f"the '(' on line {where[0]} is probably never closed (the section on line {line} starts while it is open)")
                    drop(stack[1])
                elif not stack and closed is not None and top and isinstance(top[-1], SList):
                    fail(closed, f"a ')' too many: the list opened on line {top[-1].line} closes here, before the section on line {line}")
                    stack.append(top[-1])
                    columns.append(1)
                suspect = None
            if skipping:
                continue
            if not section and len(stack) == 1 and section_closed is not None:  # a list after a section closed too early
                skipping = True
                too_many(section_closed, token, line)
                continue
            if len(stack) >= depth_limit:
                fail((line, column), beyond("nesting", f"parentheses nested more than {depth_limit} deep"), unbalanced=False)
                if len(stack) > 1:
                    drop(stack[1])
                skipping = True
                continue
            if starts_line and suspect is None and len(stack) > 1:
                deeper = [index for index in range(1, len(stack)) if columns[index] >= column]
                suspect = (stack[deeper[-1]].line, columns[deeper[-1]]) if deeper else None
            node = SList()
            node.line = line
            (stack[-1] if stack else top).append(node)
            stack.append(node)
            columns.append(column)
            if len(stack) == 2:
                section_closed = None
        elif skipping:
            continue
        elif token == ")":
            if not stack:
                fail((line, column), "a ')' closes nothing")
                continue
            node, opened = stack.pop(), columns.pop()
            if starts_line and column < opened:
                outdented = (node.line, opened)
            if len(stack) == 1 and _is_section(node):
                section_closed = (line, column, node)
            elif not stack:
                closed, section_closed = (line, column), None
        elif len(stack) == 1 and section_closed is not None:  # a word after a section closed too early
            skipping = True
            too_many(section_closed, token, line)
        elif stack and stack[-1].line == line:
            stack[-1].append(token)
        else:
            (stack[-1] if stack else top).append(Token(token, line))
    if stack and not skipping:
        # only the top-level list open: the ')' missing is probably that of the last group a
        # ')' starting a line left of it closed (the top-level list's own, closing a section)
        where = suspect or (outdented if len(stack) == 1 and outdented is not None else (stack[-1].line, columns[-1]))
        fail(where, f"the '(' on line {where[0]} is probably never closed")
        if len(stack) > 1:
            drop(stack[1])
    return found


def _is_section(expr: SExpr) -> bool:
    return isinstance(expr, SList) and bool(expr) and isinstance(expr[0], str) and expr[0].startswith(":")


def expressions(source: Source) -> list[SExpr]:
    """The top-level expressions of `source`: parsed when it is text, as they are when parsed."""
    return parse(source) if isinstance(source, str) else source


def unbalanced(text: str) -> tuple[int, str] | None:
    """Where the parentheses of `text` go wrong, as (line, message), or None when they balance.

    A missing ')' is reported where its group opens, not where a reader gives up: an open group
    is probably the unclosed one when a later line starts at its indentation or less while it is
    still open (a new sibling, e.g. the next action, began inside it).
    """
    open_groups: list[tuple[int, int]] = []  # (line, column) of each open '('
    suspect: int | None = None
    last_line = 1
    for token, _, line, column, starts_line in _placed_tokens(text):
        last_line = line
        if starts_line and token == "(" and suspect is None:
            deeper = [opened for opened, col in open_groups if col >= column]
            if deeper:
                suspect = deeper[-1]
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


def is_number(token: SExpr) -> bool:
    """Whether `token` is a number literal ("3", "-0.5")."""
    if not isinstance(token, str):
        return False
    try:
        float(token)
    except ValueError:
        return False
    return True


def to_text(expr: SExpr | list) -> str:
    """An expression back on one line: `(ontop a b)`. Iterative, so any nesting the reader
    accepts is written back without recursion."""
    if isinstance(expr, str):
        return expr
    if all(isinstance(word, str) for word in expr):  # an atom, the common case: written at once
        return f"({' '.join(expr)})"
    parts: list[str] = []
    pending: list[SExpr | list] = [expr]  # lists still to write, and text (words, spaces, ')') to write as it is
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            parts.append(item)
        elif all(isinstance(word, str) for word in item):
            parts.append(f"({' '.join(item)})")
        else:
            parts.append("(")
            pending.append(")")
            for index in range(len(item) - 1, -1, -1):
                pending.append(item[index])
                if index:
                    pending.append(" ")
    return "".join(parts)
