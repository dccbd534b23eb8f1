"""A minimal s-expression reader for PDDL text, keeping line numbers (comments skipped)."""
from __future__ import annotations

import re

_TOKEN = re.compile(r";[^\n]*|\(|\)|[^\s()]+|\n")


class SList(list):
    """A parenthesised list of tokens and lists, with the line it starts on."""

    line: int = 0

    def render(self) -> str:
        return "(" + " ".join(x.render() if isinstance(x, SList) else x for x in self) + ")"


def parse(text: str) -> list:
    """Top-level expressions of `text`; unbalanced input is read as far as it goes."""
    line, stack, top = 1, [], []
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
            if stack:
                stack.pop()
        else:
            (stack[-1] if stack else top).append(token.lower())
    return top


def danger_whens(domain_text: str) -> dict[str, list[SList]]:
    """For each action, the conditions of `(when C ...)` effects that increase (danger)."""
    found: dict[str, list[SList]] = {}
    for define in parse(domain_text):
        for item in define if isinstance(define, SList) else []:
            if isinstance(item, SList) and item and item[0] == ":action" and len(item) > 1:
                name = item[1]
                effect = _after(item, ":effect")
                found[name] = [w[1] for w in _whens(effect) if _raises_danger(w[2])] if effect else []
    return found


def _after(node: SList, keyword: str):
    for index, item in enumerate(node[:-1]):
        if item == keyword:
            return node[index + 1]
    return None


def _whens(node):
    if not isinstance(node, SList):
        return
    if node and node[0] == "when" and len(node) == 3:
        yield node
        return
    for child in node:
        yield from _whens(child)


def _raises_danger(node) -> bool:
    if not isinstance(node, SList):
        return False
    if len(node) == 3 and node[0] == "increase" and isinstance(node[1], SList) and list(node[1]) == ["danger"]:
        return True
    return any(_raises_danger(child) for child in node)
