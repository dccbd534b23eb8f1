"""How large a task grounds, estimated from the text before anything enumerates a grounding.

Unified Planning's initial state and PDDL writer, and the planners, enumerate every grounding of
every predicate; a few lines of PDDL (one 6-ary predicate over 30 objects) ground to billions of
facts. `grounding_size` counts, from the raw s-expressions only, the ground facts (predicates and
functions over the objects of their parameter types) and the ground actions; `too_large` says, in
words a generator can act on, when a task has more facts than the limit. Ground actions are counted
but not limited here: the check's search grounds only the actions static facts allow, under the
check's time limit (`safeforge.planning.grounding`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from safeforge.common.limits import beyond, check_time, current_limits
from safeforge.pddl.sexpr import SExpr, SList, Source, expressions

ADVICE = "keep predicates at most 3-ary over at most 40 objects"


@dataclass(frozen=True)
class GroundingSize:
    """Ground facts and ground actions, with the largest contributor of each."""

    facts: int
    ground_actions: int
    largest_fact: str = ""
    largest_action: str = ""


def grounding_size(domain_source: Source, problem_source: Source) -> GroundingSize:
    """The grounding size of a domain and problem (texts or their parsed expressions); text that
    does not parse counts as 0 (the reader reports it)."""
    check_time("counting the grounding")
    try:
        domain, problem = expressions(domain_source), expressions(problem_source)
    except ValueError:
        return GroundingSize(0, 0)
    parents = _types(_section(domain, ":types"))
    counts: dict[str, int] = {}
    for names, type_name in [*_typed(_section(domain, ":constants")), *_typed(_section(problem, ":objects"))]:
        for ancestor in _ancestors(type_name, parents):
            counts[ancestor] = counts.get(ancestor, 0) + len(names)

    def groundings(parameters: Iterable[SExpr]) -> int:
        return math.prod(counts.get(t.lower(), 0) ** len(names) for names, t in _typed(parameters))

    facts = [
        (groundings(p[1:]), str(p[0]))
        for section in (":predicates", ":functions")
        for p in _section(domain, section)
        if isinstance(p, SList) and p
    ]
    actions = []
    for item in _top(domain):
        if isinstance(item, SList) and len(item) > 1 and _is(item[0], ":action"):
            actions.append((groundings(_after(item, ":parameters") or []), str(item[1])))
    fact_max = max(facts, default=(0, ""))
    action_max = max(actions, default=(0, ""))
    return GroundingSize(sum(n for n, _ in facts), sum(n for n, _ in actions), fact_max[1], action_max[1])


def too_large(size: GroundingSize) -> str | None:
    """Why a task is too large to use (None when its facts are within the limit)."""
    limits = current_limits()
    if size.facts > limits.ground_facts:
        excess = beyond("ground_facts", f"the problem grounds to {size.facts:,} facts")
        return f"{excess}; the largest is ({size.largest_fact} ...); {ADVICE}"
    return None


def _top(exprs: list[SExpr]) -> list[SExpr]:
    """The items of the first `(define ...)`."""
    for expr in exprs:
        if isinstance(expr, SList) and expr and _is(expr[0], "define"):
            return list(expr)
    return []


def _section(exprs: list[SExpr], keyword: str) -> list[SExpr]:
    for item in _top(exprs):
        if isinstance(item, SList) and item and _is(item[0], keyword):
            return list(item[1:])
    return []


def _typed(items: Iterable[SExpr]) -> list[tuple[list[str], str]]:
    """`a b - t c` -> [([a, b], t), ([c], object)] (names and types lower-cased)."""
    groups: list[tuple[list[str], str]] = []
    pending: list[str] = []
    words = [str(w) if isinstance(w, str) else "either" for w in items]
    index = 0
    while index < len(words):
        if words[index] == "-" and index + 1 < len(words):
            groups.append((pending, words[index + 1].lower()))
            pending, index = [], index + 2
        else:
            pending.append(words[index].lower())
            index += 1
    if pending:
        groups.append((pending, "object"))
    return groups


def _types(items: list[SExpr]) -> dict[str, str]:
    return {name: parent for names, parent in _typed(items) for name in names}


def _ancestors(type_name: str, parents: dict[str, str]) -> list[str]:
    found = [type_name]
    while (parent := parents.get(found[-1])) is not None and parent not in found:
        found.append(parent)
    if "object" not in found:
        found.append("object")
    return found


def _is(token: SExpr, word: str) -> bool:
    return isinstance(token, str) and token.lower() == word


def _after(node: SList, keyword: str) -> list[SExpr] | None:
    for index, item in enumerate(node[:-1]):
        if _is(item, keyword) and isinstance(node[index + 1], SList):
            return list(node[index + 1])
    return None
