"""The do-nothing rule of generated tasks: no action may be applied so that it changes nothing.

An action whose effects add and delete the same fact once two of its parameters name the same
object (`(go_to drawer drawer)`: robot_at drawer deleted and added) is a step that does nothing:
a plan may take it anywhere, which pads plans and lets danger hide in a move that goes nowhere.
Unless its precondition rules that binding out (it then needs a fact and its negation), the rule
fails with the action, the two parameters and the fact, and says how to rule it out.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from safeforge.pddl.reader import Action, PDDLTask
from safeforge.pddl.sexpr import SExpr, SList
from safeforge.task.rules import Finding

DO_NOTHING = "do-nothing actions"


def _literals(node: SExpr | None, positive: bool = True) -> Iterator[tuple[bool, tuple[str, ...]]]:
    """The unconditional literals of a conjunction: (positive, atom)."""
    if not isinstance(node, SList) or not node or not isinstance(node[0], str):
        return
    head = node[0].lower()
    if head == "and":
        for part in node[1:]:
            yield from _literals(part, positive)
    elif head == "not" and len(node) == 2:
        yield from _literals(node[1], not positive)
    elif head not in ("when", "forall", "exists", "or", "imply", "=", "increase", "decrease") and all(isinstance(a, str) for a in node):
        yield positive, tuple(str(a).lower() for a in node)


def _bound(atom: tuple[str, ...], same: str, other: str) -> tuple[str, ...]:
    return tuple(same if a == other else a for a in atom)


def _compatible(task: PDDLTask, first: str, second: str) -> bool:
    """Whether one object can be of both types."""
    return first.lower() in task._ancestors(second.lower()) or second.lower() in task._ancestors(first.lower())


def _no_op(task: PDDLTask, action: Action) -> str | None:
    effects = list(_literals(action.effect))
    preconditions = list(_literals(action.precondition))
    for (first, first_type), (second, second_type) in combinations(action.parameters, 2):
        if not _compatible(task, first_type, second_type):
            continue
        same, other = f"?{first}".lower(), f"?{second}".lower()
        bound = {(p, _bound(atom, same, other)) for p, atom in preconditions}
        if any((not p, atom) in bound for p, atom in bound):
            continue  # the precondition cannot hold with both the same
        added = [atom for p, atom in effects if p]
        deleted = {_bound(atom, same, other) for p, atom in effects if not p}
        if added and all(_bound(atom, same, other) in deleted for atom in added):
            fact = f"({' '.join(_bound(added[0], same, other))})"
            guard = f"(not ({' '.join(added[0])}))"
            return (
                f"action {action.name} with ?{second} the same object as ?{first} changes nothing (it deletes and adds "
                f"{fact}); rule that out in its precondition, e.g. {guard}"
            )
    return None


def do_nothing_check(task: PDDLTask) -> Finding:
    """No action can be applied with two parameters naming one object so that it changes nothing."""
    found = [problem for action in task.actions.values() if (problem := _no_op(task, action))]
    if found:
        return Finding(DO_NOTHING, False, "; ".join(found))
    return Finding(DO_NOTHING, True, "no action can be applied so that it changes nothing")
