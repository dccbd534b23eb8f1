"""Resources: numeric fluents of which more is never worse (a battery level, fuel), so that a search
may drop a state when it has seen the same state with at least as much of each.

A function is a resource when every action changes it only by a constant (`increase`/`decrease` by a
number), every condition that reads it is a lower bound on it (`(>= (f ...) 3)`, `(> (f ...) 0)`, or
the same written the other way round) outside any negation, and nothing else reads it: no other
update's value, no conditional effect's condition (a higher value could change what an action does,
or fire a danger), no other comparison. Then from a state with more of it every plan of a state with
less applies too, reaching the goal in as many steps, with the same dangers.
"""

from __future__ import annotations

from safeforge.pddl.reader import DANGER
from safeforge.pddl.sexpr import SExpr, SList, is_number
from safeforge.validation.simulator import Simulator

_LOWER_BOUNDS = {">=": 1, ">": 1, "<=": 2, "<": 2}  # comparison -> the side the fluent must be on
_COMPARISONS = {*_LOWER_BOUNDS, "="}
_BY_CONSTANT = {"increase", "decrease"}
_UPDATES = {*_BY_CONSTANT, "assign", "scale-up", "scale-down"}


def resources(sim: Simulator) -> frozenset[str]:
    """The resources of the task (lower-case function names; never danger)."""
    functions = {name.lower() for name in sim.task.functions} - {DANGER}
    spoiled: set[str] = set()
    for action in sim.actions.values():
        _condition(action.precondition, functions, spoiled, negated=False)
        _effect(action.effect, functions, spoiled)
    _condition(sim.task.goal, functions, spoiled, negated=False)
    return frozenset(functions - spoiled)


def _condition(node: SExpr | None, functions: set[str], spoiled: set[str], negated: bool) -> None:
    if not isinstance(node, SList) or not node or not isinstance(node[0], str):
        return
    head = node[0].lower()
    if head in _COMPARISONS:
        side = _LOWER_BOUNDS.get(head)
        for position, part in enumerate(node[1:], start=1):
            read = _read(part, functions)
            bound = len(node) == 3 and position == side and _is_fluent(part) and is_number(node[3 - position])
            if read and (negated or not bound):
                spoiled |= read
        return
    if head == "not":
        for part in node[1:]:
            _condition(part, functions, spoiled, not negated)
    elif head == "imply" and len(node) == 3:
        _condition(node[1], functions, spoiled, not negated)
        _condition(node[2], functions, spoiled, negated)
    elif head in ("forall", "exists"):
        for part in node[2:]:
            _condition(part, functions, spoiled, negated)
    else:
        for part in node[1:]:
            _condition(part, functions, spoiled, negated)


def _effect(node: SExpr | None, functions: set[str], spoiled: set[str]) -> None:
    if not isinstance(node, SList) or not node or not isinstance(node[0], str):
        return
    head = node[0].lower()
    if head in _UPDATES and len(node) == 3:
        target = _name(node[1])
        if target in functions and (head not in _BY_CONSTANT or not is_number(node[2])):
            spoiled.add(target)
        spoiled |= _read(node[2], functions)
    elif head == "when" and len(node) == 3:
        spoiled |= _read(node[1], functions)
        _effect(node[2], functions, spoiled)
    elif head == "forall":
        for part in node[2:]:
            _effect(part, functions, spoiled)
    else:
        for part in node[1:]:
            _effect(part, functions, spoiled)


def _read(node: SExpr, functions: set[str]) -> set[str]:
    """The functions `node` mentions anywhere."""
    if isinstance(node, str):
        return set()
    found = {node[0].lower()} & functions if node and isinstance(node[0], str) else set()
    for part in node:
        found |= _read(part, functions)
    return found


def _name(node: SExpr) -> str | None:
    return node[0].lower() if isinstance(node, SList) and node and isinstance(node[0], str) else None


def _is_fluent(node: SExpr) -> bool:
    """A fluent itself, `(f ...)` with arguments that are names (not an expression over it)."""
    return isinstance(node, SList) and bool(node) and all(isinstance(part, str) for part in node)
