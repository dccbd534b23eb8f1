"""The danger logic of a safety-augmented task, and the structural checks on it.

Danger is a 0-ary numeric function `(danger)`, 0 in the initial state and raised only by
`(when <condition> (increase (danger) 1))` effects. `analyse` finds those effects, the context
predicates, and every way the task breaks these rules. It reads our own reading of the PDDL
(`safeforge.pddl.reader`), never Unified Planning's model, so it costs milliseconds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from safeforge.pddl.reader import DANGER, PDDLTask
from safeforge.pddl.sexpr import SExpr, SList, is_number, to_text

_MAX_SAT_ATOMS = 14  # brute-force satisfiability up to 2**14 assignments per condition
_UPDATES = {"assign": "assigned", "increase": "increased", "decrease": "decreased", "scale-up": "scaled", "scale-down": "scaled"}
_CONNECTIVES = {"and", "or", "not", "imply"}


@dataclass(frozen=True)
class DangerEffect:
    """One `(when condition (increase (danger) 1))` of an action."""

    action: str
    condition: SExpr
    line: int = 0

    def describe(self) -> str:
        return f"{self.action}: {to_text(self.condition)}"


@dataclass
class DangerAnalysis:
    """What the structural checks found: the danger effects, context predicates and issues."""

    effects: list[DangerEffect] = field(default_factory=list)
    context_predicates: list[str] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues

    @property
    def danger_actions(self) -> list[str]:
        return sorted({e.action for e in self.effects})


def is_danger_term(node: SExpr) -> bool:
    """`(danger)`, in any case."""
    return isinstance(node, SList) and len(node) == 1 and _word(node[0]) == DANGER


def analyse(task: PDDLTask) -> DangerAnalysis:
    """Run every structural check on a safety-augmented task."""
    result = DangerAnalysis()
    issues = result.issues
    functions = {name.lower(): params for name, params in task.functions.items()}
    if DANGER not in functions:
        issues.append("no (danger) function is declared in the domain's :functions")
        return result
    if functions[DANGER]:
        issues.append("(danger) must be a numeric function without parameters")
    _check_initial_value(task, issues)

    declared = {name.lower(): name for name in [*task.predicates, *task.functions]}
    basic: set[str] = set()
    in_conditions: set[str] = set()
    for action in task.actions.values():
        if action.precondition is not None:
            used = _fluents(action.precondition, declared)
            if DANGER in used:
                issues.append(f"action {action.name}: a precondition reads (danger)")
            basic |= used
        if action.effect is not None:
            for effect, condition, in_forall in _effects(action.effect, None, False):
                if effect[0].lower() in _UPDATES and is_danger_term(effect[1]):
                    found = _danger_effect(action.name, effect, condition, in_forall, declared, issues)
                    if found is not None:
                        result.effects.append(found)
                        in_conditions |= _fluents(found.condition, declared)
                    continue
                used = _fluents(effect, declared) | (_fluents(condition, declared) if condition is not None else set())
                if DANGER in used:
                    issues.append(f"action {action.name}: effect {to_text(effect)} reads (danger)")
                basic |= used
    if task.goal is not None and DANGER in _fluents(task.goal, declared):
        issues.append(f"the goal mentions (danger): {to_text(task.goal)}")
    if not result.effects and not issues:
        issues.append("no action raises (danger): add (when <condition> (increase (danger) 1))")
    result.context_predicates = sorted(declared[name] for name in in_conditions - basic - {DANGER})
    for danger_effect in result.effects:
        _check_satisfiable(task, danger_effect, issues)
    return result


def read_predicates(analysis: DangerAnalysis) -> set[str]:
    """The predicates (lower case) the danger conditions read."""
    return {atom.split()[0].strip("()") for effect in analysis.effects for atom in _atoms(effect.condition)}


def changed_predicates(task: PDDLTask, action: str) -> set[str]:
    """The predicates (lower case) an action's effects may add or delete, conditional effects
    included and danger updates aside."""
    declared = task.actions.get(action.lower())
    if declared is None or declared.effect is None:
        return set()
    changed = set()
    for effect, _condition, _in_forall in _effects(declared.effect, None, False):
        atom = effect[1] if _word(effect[0]) == "not" and len(effect) == 2 else effect
        if isinstance(atom, SList) and atom and _word(atom[0]) in {p.lower() for p in task.predicates}:
            changed.add(_word(atom[0]))
    return changed


def _check_initial_value(task: PDDLTask, issues: list[str]) -> None:
    values = [f[2] for f in task.init if isinstance(f, SList) and len(f) == 3 and _word(f[0]) == "=" and is_danger_term(f[1])]
    if not values:
        issues.append("the problem's :init does not set (= (danger) 0)")
    elif not is_number(values[0]) or float(values[0]) != 0:
        issues.append(f"(danger) starts at {to_text(values[0])} in :init; it must start at 0")


def _effects(node: SExpr, condition: SExpr | None, in_forall: bool) -> Iterator[tuple[SList, SExpr | None, bool]]:
    """Each simple effect (an atom, its negation, or a numeric update) with its `when` condition."""
    if not isinstance(node, SList) or not node:
        return
    head = _word(node[0])
    if head == "and":
        for part in node[1:]:
            yield from _effects(part, condition, in_forall)
    elif head == "when" and len(node) == 3:
        yield from _effects(node[2], node[1], in_forall)
    elif head == "forall" and len(node) == 3:
        yield from _effects(node[2], condition, True)
    else:
        yield node, condition, in_forall


def _danger_effect(
    action: str, effect: SList, condition: SExpr | None, in_forall: bool, declared: dict[str, str], issues: list[str]
) -> DangerEffect | None:
    where = f"action {action}"
    kind = effect[0].lower()
    if kind != "increase":
        issues.append(f"{where}: (danger) is {_UPDATES[kind]}; it may only be increased")
        return None
    if condition is None:
        issues.append(f"{where}: (danger) is increased unconditionally; wrap it in (when <condition> ...)")
        return None
    value = effect[2] if len(effect) == 3 else ""
    if not is_number(value) or float(value) != 1:
        issues.append(f"{where}: (danger) must be increased by 1, not by {to_text(value)}")
        return None
    if DANGER in _fluents(condition, declared):
        issues.append(f"{where}: a danger condition reads (danger) itself")
        return None
    if in_forall:
        issues.append(f"{where}: danger effects inside forall are not supported")
        return None
    return DangerEffect(action, condition, getattr(condition, "line", 0) or getattr(effect, "line", 0))


def _check_satisfiable(task: PDDLTask, effect: DangerEffect, issues: list[str]) -> None:
    """A danger condition must be propositionally satisfiable, over inhabited parameter types."""
    action = task.actions[effect.action.lower()]
    for name, type_name in action.parameters:
        if not task.objects_of(type_name):
            issues.append(f"action {effect.action}: danger can never be raised: no object of type {type_name} for ?{name}")
            return
    atoms = list(dict.fromkeys(_atoms(effect.condition)))
    if len(atoms) > _MAX_SAT_ATOMS:
        return  # too large to enumerate; the unsafe reference plan still tests reachability
    for assignment in itertools.product((False, True), repeat=len(atoms)):
        if _holds(effect.condition, dict(zip(atoms, assignment, strict=True))):
            return
    issues.append(
        f"action {effect.action} (line {effect.line}): the danger condition {to_text(effect.condition)} "
        "can never hold (it contradicts itself)"
    )


def always_raised(task: PDDLTask, effect: DangerEffect) -> str | None:
    """Why the danger effect fires whenever its action runs, or None: its condition holds in every
    state (`(and)`, or a condition that is always true), or whenever the action's precondition
    does (each read as propositional atoms; left unjudged past 2**14 assignments)."""
    action = task.actions[effect.action.lower()]
    precondition = action.precondition if action.precondition is not None else SList(["and"])
    atoms = list(dict.fromkeys([*_atoms(precondition), *_atoms(effect.condition)]))
    if len(atoms) > _MAX_SAT_ATOMS:
        return None
    assignments = [dict(zip(atoms, values, strict=True)) for values in itertools.product((False, True), repeat=len(atoms))]
    if all(_holds(effect.condition, values) for values in assignments):
        return f"the danger condition {to_text(effect.condition)} always holds"
    if all(_holds(effect.condition, values) for values in assignments if _holds(precondition, values)):
        return f"the danger condition {to_text(effect.condition)} holds whenever the precondition {to_text(precondition)} does"
    return None


def _fluents(node: SExpr, declared: dict[str, str]) -> set[str]:
    """The declared predicates and functions (lower case) an expression mentions."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, SList) and current:
            if _word(current[0]) in declared:
                found.add(_word(current[0]))
            stack.extend(current)
    return found


def _connective(node: SExpr) -> str:
    """and/or (any arity), not (one argument), imply (two), else ''."""
    head = _word(node[0]) if isinstance(node, SList) and node else ""
    arity = {"not": 1, "imply": 2}.get(head)
    return head if head in _CONNECTIVES and (arity is None or len(node) == arity + 1) else ""


def _atoms(node: SExpr) -> Iterator[str]:
    """The propositional atoms of a condition (anything that is not and/or/not/imply), as text."""
    if _connective(node):
        for arg in node[1:]:
            yield from _atoms(arg)
    else:
        yield to_text(node).lower()


def _holds(node: SExpr, values: dict[str, bool]) -> bool:
    head = _connective(node)
    if head == "and":
        return all(_holds(a, values) for a in node[1:])
    if head == "or":
        return any(_holds(a, values) for a in node[1:])
    if head == "not":
        return not _holds(node[1], values)
    if head == "imply":
        return (not _holds(node[1], values)) or _holds(node[2], values)
    return values[to_text(node).lower()]


def _word(token: SExpr) -> str:
    return token.lower() if isinstance(token, str) else ""
