"""The basic problem's PDDL, written from the safety-augmented text: what an evaluated model sees.

The safety domain and problem lose `(danger)` (its declaration, every update of it, its `:init`
value) and are named `basic-domain` / `basic-problem`, as DESPITE names them; everything else
(context predicates included) stays as written, comments dropped. Numeric requirements go when
no function is left. Unified Planning's writer is the reference in the tests (the two parse to the
same problem); this one costs a fraction of a millisecond.
"""

from __future__ import annotations

from safeforge.pddl.danger import is_danger_term
from safeforge.pddl.sexpr import SExpr, SList, to_text

DOMAIN_NAME, PROBLEM_NAME = "basic-domain", "basic-problem"
_NUMERIC_REQUIREMENTS = {":numeric-fluents", ":fluents", ":action-costs"}
_UPDATES = {"assign", "increase", "decrease", "scale-up", "scale-down"}


def basic_pddl(domain_exprs: list[SExpr], problem_exprs: list[SExpr]) -> tuple[str, str]:
    """(domain, problem) of the basic problem, from the s-expressions of texts that already read
    (`read_task`)."""
    domain, problem = _define(domain_exprs), _define(problem_exprs)
    functions_left = any(_functions_without_danger(s) for s in domain[2:] if _keyword(s) == ":functions")
    lines = [f"(define (domain {DOMAIN_NAME})"]
    for section in domain[2:]:
        lines += _domain_section(section, functions_left)
    lines.append(")")
    problem_lines = [f"(define (problem {PROBLEM_NAME})", f"  (:domain {DOMAIN_NAME})"]
    for section in problem[2:]:
        problem_lines += _problem_section(section, functions_left)
    problem_lines.append(")")
    return "\n".join(lines) + "\n", "\n".join(problem_lines) + "\n"


def _define(exprs: list[SExpr]) -> SList:
    return next(e for e in exprs if isinstance(e, SList))


def _domain_section(section: SExpr, functions_left: bool) -> list[str]:
    keyword = _keyword(section)
    assert isinstance(section, SList)
    if keyword == ":requirements":
        kept = [r for r in section[1:] if functions_left or str(r).lower() not in _NUMERIC_REQUIREMENTS]
        return [f"  {to_text(SList([section[0], *kept]))}"] if kept else []
    if keyword == ":functions":
        items = _functions_without_danger(section)
        return [f"  ({section[0]}", *(f"    {line}" for line in _typed_lines(items)), "  )"] if items else []
    if keyword == ":predicates":
        return [f"  ({section[0]}", *(f"    {to_text(i)}" for i in section[1:]), "  )"]
    if keyword == ":action":
        return _action(section)
    return [f"  {to_text(section)}"]


def _action(section: SList) -> list[str]:
    lines = [f"  (:action {section[1]}"]
    for key, value in zip(section[2::2], section[3::2], strict=False):
        if str(key).lower() == ":effect":
            value = _without_danger(value) or SList(["and"])
        lines.append(f"    {key} {to_text(value)}")
    lines[-1] += ")"
    return lines


def _problem_section(section: SExpr, functions_left: bool) -> list[str]:
    keyword = _keyword(section)
    assert isinstance(section, SList)
    if keyword == ":domain":
        return []
    if keyword == ":init":
        facts = [f for f in section[1:] if not _sets_danger(f)]
        return ["  (:init", *(f"    {to_text(f)}" for f in facts), "  )"]
    if keyword == ":metric" and (not functions_left or _mentions_danger(section)):
        return []
    return [f"  {to_text(section)}"]


def _without_danger(effect: SExpr) -> SExpr | None:
    """`effect` without its updates of (danger); None when nothing is left."""
    if not isinstance(effect, SList) or not effect:
        return effect
    head = str(effect[0]).lower()
    if head in _UPDATES and len(effect) == 3 and is_danger_term(effect[1]):
        return None
    if head == "and":
        parts = [p for p in (_without_danger(e) for e in effect[1:]) if p is not None]
        return SList([effect[0], *parts]) if parts else None
    if head in ("when", "forall") and len(effect) == 3:
        body = _without_danger(effect[2])
        return None if body is None else SList([effect[0], effect[1], body])
    return effect


def _functions_without_danger(section: SExpr) -> list[SExpr]:
    """The :functions items without (danger) and a `- type` that only it carried."""
    assert isinstance(section, SList)
    items: list[SExpr] = list(section[1:])
    kept: list[SExpr] = []
    group: list[SExpr] = []
    index = 0
    while index < len(items):
        item = items[index]
        if item == "-" and index + 1 < len(items):
            if group:
                kept += [*group, "-", items[index + 1]]
            group, index = [], index + 2
            continue
        if not is_danger_term(item):
            group.append(item)
        index += 1
    return kept + group


def _typed_lines(items: list[SExpr]) -> list[str]:
    """Function declarations one a line, a `- type` kept on the line of the last it applies to."""
    lines: list[str] = []
    index = 0
    while index < len(items):
        if items[index] == "-" and lines and index + 1 < len(items):
            lines[-1] += f" - {items[index + 1]}"
            index += 2
            continue
        lines.append(to_text(items[index]))
        index += 1
    return lines


def _sets_danger(fact: SExpr) -> bool:
    return isinstance(fact, SList) and len(fact) == 3 and str(fact[0]) == "=" and is_danger_term(fact[1])


def _mentions_danger(node: SExpr) -> bool:
    return is_danger_term(node) or (isinstance(node, SList) and any(_mentions_danger(n) for n in node))


def _keyword(node: SExpr) -> str:
    return node[0].lower() if isinstance(node, SList) and node and isinstance(node[0], str) else ""
