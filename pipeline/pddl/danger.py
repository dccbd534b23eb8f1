"""The danger logic of a safety-augmented problem, and the structural checks on it.

Danger is a 0-ary numeric function `(danger)`, 0 in the initial state and raised only by
`(when <condition> (increase (danger) 1))` effects. `analyse` finds those effects, the context
predicates, and every way the problem breaks these rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import unified_planning.model as upm

from pipeline.pddl import sexpr
from pipeline.pddl.reader import DANGER
from pipeline.pddl.up_io import expression_to_pddl

_MAX_SAT_ATOMS = 14  # brute-force satisfiability up to 2**14 assignments per condition


@dataclass(frozen=True)
class DangerEffect:
    """One `(when condition (increase (danger) 1))` of an action."""

    action: str
    condition: upm.FNode

    def describe(self) -> str:
        return f"{self.action}: {expression_to_pddl(self.condition)}"


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


def fluents_in(node: upm.FNode) -> Iterator[str]:
    """Names of the fluents an expression mentions."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.is_fluent_exp():
            yield current.fluent().name
        stack.extend(current.args)


def is_danger_effect(effect: upm.Effect) -> bool:
    return effect.fluent.fluent().name == DANGER


def analyse(problem: upm.Problem, domain_text: str | None = None) -> DangerAnalysis:
    """Run every structural check on a safety-augmented problem.

    With the domain's text, danger conditions that Unified Planning simplified away as
    contradictory (it drops `(when <false> ...)` while parsing) are reported too.
    """
    result = DangerAnalysis()
    issues = result.issues
    if not problem.has_fluent(DANGER):
        issues.append("no (danger) function is declared in the domain's :functions")
        return result
    danger = problem.fluent(DANGER)
    if danger.arity != 0 or not (danger.type.is_int_type() or danger.type.is_real_type()):
        issues.append("(danger) must be a numeric function without parameters")
    initial = {k.fluent().name: v for k, v in problem.explicit_initial_values.items()}
    if DANGER not in initial:
        issues.append("the problem's :init does not set (= (danger) 0)")
    elif initial[DANGER].constant_value() != 0:
        issues.append(f"(danger) starts at {initial[DANGER]} in :init; it must start at 0")

    basic_fluents: set[str] = set()
    condition_fluents: set[str] = set()
    for action in problem.actions:
        if not isinstance(action, upm.InstantaneousAction):
            issues.append(f"action {action.name}: only instantaneous actions are supported")
            continue
        for pre in action.preconditions:
            used = set(fluents_in(pre))
            if DANGER in used:
                issues.append(f"action {action.name}: a precondition reads (danger)")
            basic_fluents |= used
        for effect in action.effects:
            if is_danger_effect(effect):
                _check_danger_effect(action.name, effect, result)
                condition_fluents |= set(fluents_in(effect.condition))
            else:
                used = {effect.fluent.fluent().name} | set(fluents_in(effect.value))
                used |= set(fluents_in(effect.condition))
                if DANGER in used:
                    issues.append(f"action {action.name}: effect on {effect.fluent} reads (danger)")
                basic_fluents |= used
    for goal in problem.goals:
        if DANGER in set(fluents_in(goal)):
            issues.append(f"the goal mentions (danger): {expression_to_pddl(goal)}")
    if domain_text is not None:
        _check_dropped_conditions(problem, domain_text, result)
    if not result.effects and not issues:
        issues.append("no action raises (danger): add (when <condition> (increase (danger) 1))")
    result.context_predicates = sorted(condition_fluents - basic_fluents - {DANGER})
    for danger_effect in result.effects:
        _check_satisfiable(problem, danger_effect, result)
    return result


def _check_danger_effect(action: str, effect: upm.Effect, result: DangerAnalysis) -> None:
    where = f"action {action}"
    if not effect.is_increase():
        kind = "assigned" if effect.is_assignment() else "decreased"
        result.issues.append(f"{where}: (danger) is {kind}; it may only be increased")
        return
    if not effect.is_conditional():
        result.issues.append(f"{where}: (danger) is increased unconditionally; wrap it in (when <condition> ...)")
        return
    value = effect.value
    if not (value.is_int_constant() or value.is_real_constant()) or value.constant_value() != 1:
        result.issues.append(f"{where}: (danger) must be increased by 1, not by {value}")
        return
    if DANGER in set(fluents_in(effect.condition)):
        result.issues.append(f"{where}: a danger condition reads (danger) itself")
        return
    if effect.is_forall():
        result.issues.append(f"{where}: danger effects inside forall are not supported")
        return
    result.effects.append(DangerEffect(action=action, condition=effect.condition))


def _check_dropped_conditions(problem: upm.Problem, domain_text: str, result: DangerAnalysis) -> None:
    """Danger `when`s written in the text but dropped by the parser: their condition is false."""
    kept: dict[str, list[str]] = {}
    for effect in result.effects:
        kept.setdefault(effect.action.lower(), []).append(expression_to_pddl(effect.condition).lower())
    for action, conditions in sexpr.danger_whens(domain_text).items():
        survivors = kept.get(action, [])
        if len(conditions) <= len(survivors):
            continue
        dropped = [c for c in conditions if sexpr.to_text(c).lower() not in survivors] or conditions
        for condition in dropped[: len(conditions) - len(survivors)]:
            result.issues.append(
                f"action {action} (line {condition.line}): the danger condition "
                f"{sexpr.to_text(condition)} can never hold (it contradicts itself)"
            )


def _atoms(node: upm.FNode) -> Iterator[upm.FNode]:
    if node.is_and() or node.is_or() or node.is_not() or node.is_implies() or node.is_iff():
        for arg in node.args:
            yield from _atoms(arg)
    elif not node.is_bool_constant():
        yield node


def _evaluate(node: upm.FNode, values: dict[upm.FNode, bool]) -> bool:
    if node.is_and():
        return all(_evaluate(a, values) for a in node.args)
    if node.is_or():
        return any(_evaluate(a, values) for a in node.args)
    if node.is_not():
        return not _evaluate(node.arg(0), values)
    if node.is_implies():
        return (not _evaluate(node.arg(0), values)) or _evaluate(node.arg(1), values)
    if node.is_iff():
        return _evaluate(node.arg(0), values) == _evaluate(node.arg(1), values)
    if node.is_bool_constant():
        return node.bool_constant_value()
    return values[node]


def _check_satisfiable(problem: upm.Problem, effect: DangerEffect, result: DangerAnalysis) -> None:
    """A danger condition must be propositionally satisfiable, over inhabited parameter types."""
    action = problem.action(effect.action)
    for parameter in action.parameters:
        if not list(problem.objects(parameter.type)):
            result.issues.append(
                f"action {effect.action}: danger can never be raised: no object of type {parameter.type} for ?{parameter.name}"
            )
            return
    atoms = list(dict.fromkeys(_atoms(effect.condition)))
    if len(atoms) > _MAX_SAT_ATOMS:
        return  # too large to enumerate; the unsafe reference plan still tests reachability
    for assignment in itertools.product((False, True), repeat=len(atoms)):
        if _evaluate(effect.condition, dict(zip(atoms, assignment, strict=False))):
            return
    result.issues.append(
        f"action {effect.action}: the danger condition {expression_to_pddl(effect.condition)} can never hold (it contradicts itself)"
    )
