"""The do-nothing rule of generated tasks: no action may be applied so that it changes nothing.

An action whose effects add and delete the same fact once two of its parameters name the same
object (`(go_to drawer drawer)`: robot_at drawer deleted and added) is a step that does nothing:
a plan may take it anywhere, which pads plans and lets danger hide in a move that goes nowhere.
Unless its precondition rules that binding out, the rule fails with the action, the two
parameters and the fact, and says how to rule it out. A binding is ruled out when its precondition
can never hold in the problem, judged by what the problem states, never by a syntactic shape: it
needs a fact and its negation, no object is of both parameters' types, or a static precondition
(a predicate no action's effect changes, so `:init` decides it for good) holds for no object:
`(push_on_level_path ?from ?to)` with `(level_path ?from ?to)` is no do-nothing step when no
`(level_path x x)` is in `:init`, since that grounding can never be applied (issue #50).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from safeforge.pddl.danger import changed_predicates
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


def _static_predicates(task: PDDLTask) -> set[str]:
    """The predicates (lower case) no action's effect adds or deletes: `:init` fixes them."""
    changed = {name for action in task.actions.values() for name in changed_predicates(task, action.name)}
    return {name.lower() for name in task.predicates} - changed


def _initial_facts(task: PDDLTask) -> set[tuple[str, ...]]:
    """The atoms `:init` states, in lower case."""
    return {
        tuple(str(a).lower() for a in fact)
        for fact in task.init
        if isinstance(fact, SList) and fact and all(isinstance(a, str) for a in fact) and str(fact[0]).lower() not in ("=", "not")
    }


def _matches(pattern: tuple[str, ...], fact: tuple[str, ...], value: str, same: str) -> bool:
    """Whether `fact` is `pattern` with `same` as `value` and any other parameter as anything."""
    return len(pattern) == len(fact) and all(
        p == f or (p == same and f == value) or (p.startswith("?") and p != same) for p, f in zip(pattern, fact, strict=True)
    )


def _can_hold_as_one(task: PDDLTask, action: Action, preconditions, same: str, other: str, static: set[str], facts) -> str | None:
    """None when no object can be both parameters with the static preconditions holding in `:init`
    (each atom read on its own, so this errs toward "can hold"); else the evidence that one can
    ("" when the precondition reads no static fact)."""
    types = {f"?{name}".lower(): kind for name, kind in action.parameters}
    candidates = [o.lower() for o in task.objects_of(types[same]) if o in set(task.objects_of(types[other]))]
    read = [(p, _bound(atom, same, other)) for p, atom in preconditions if atom[0] in static]
    for value in candidates:
        shown = []
        for positive, atom in read:
            if positive:
                fact = next((f for f in sorted(facts) if _matches(atom, f, value, same)), None)
                if fact is None:
                    break
                shown.append(f"({' '.join(fact)})")
            else:
                ground = _ground(atom, same, value)
                if all(not a.startswith("?") for a in ground[1:]) and ground in facts:
                    break
                shown.append(f"(not ({' '.join(ground)}))")
        else:
            return f" (it can be applied so: with both {value}, {', '.join(shown)} holds in :init)" if shown else ""
    return None


def _ground(atom: tuple[str, ...], same: str, value: str) -> tuple[str, ...]:
    return tuple(value if a == same else a for a in atom)


def _no_op(task: PDDLTask, action: Action) -> str | None:
    effects = list(_literals(action.effect))
    preconditions = list(_literals(action.precondition))
    static, facts = _static_predicates(task), _initial_facts(task)
    for (first, first_type), (second, second_type) in combinations(action.parameters, 2):
        if not _compatible(task, first_type, second_type):
            continue
        same, other = f"?{first}".lower(), f"?{second}".lower()
        bound = {(p, _bound(atom, same, other)) for p, atom in preconditions}
        if any((not p, atom) in bound for p, atom in bound):
            continue  # the precondition cannot hold with both the same
        evidence = _can_hold_as_one(task, action, preconditions, same, other, static, facts)
        if evidence is None:
            continue  # no object of the problem can be both with the static preconditions holding
        added = [atom for p, atom in effects if p]
        deleted = {_bound(atom, same, other) for p, atom in effects if not p}
        if added and all(_bound(atom, same, other) in deleted for atom in added):
            fact = f"({' '.join(_bound(added[0], same, other))})"
            guard = f"(not ({' '.join(added[0])}))"
            return (
                f"action {action.name} with ?{second} the same object as ?{first} changes nothing (it deletes and adds "
                f"{fact}){evidence}; rule that out in its precondition, e.g. {guard}"
            )
    return None


def do_nothing_check(task: PDDLTask) -> Finding:
    """No action can be applied with two parameters naming one object so that it changes nothing."""
    found = [problem for action in task.actions.values() if (problem := _no_op(task, action))]
    if found:
        return Finding(DO_NOTHING, False, "; ".join(found))
    return Finding(DO_NOTHING, True, "no action can be applied so that it changes nothing")
