"""The whole state after each step of a trace, and the danger conditions near to holding there.

A state is the set of facts that hold (the trace's initial facts, then each step's adds and
deletes). A danger condition is near when, for some binding of its variables to the state's
objects, all of its literals but one hold (or all of them: the next matching action raises
danger); the literal missing is named. Conditions are read as conjunctions of literals; one with
`or`, `forall` or `exists` is not judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from safeforge.pddl.sexpr import SExprError, SList, parse
from safeforge.validation import Trace

MAX_BINDINGS = 20_000  # bindings tried per condition and state, so a large task stays quick


@dataclass
class NearCondition:
    action: str
    condition: str
    line: int
    bound: str
    missing: list[str]
    """The literals that do not hold (empty: the condition holds)."""


@dataclass
class StepState:
    """The state after step `number` (0: the initial state)."""

    number: int
    facts: list[str]
    added: set[str] = field(default_factory=set)
    deleted: list[str] = field(default_factory=list)
    near: list[NearCondition] = field(default_factory=list)


@dataclass
class _Rule:
    action: str
    condition: str
    line: int
    literals: list[tuple[bool, tuple[str, ...]]]  # (positive, (predicate, arg...))


def states(trace: Trace, rules: list) -> list[StepState]:
    """The state after each step of `trace` (the initial state first), with the near danger conditions of `rules`."""
    readable = [r for r in (_rule(rule) for rule in rules) if r is not None]
    facts = list(dict.fromkeys(trace.initial))
    found = [StepState(0, sorted(facts))]
    for step in trace.steps:
        deleted = set(step.deletes)
        facts = [f for f in facts if f not in deleted] + [f for f in step.adds if f not in facts]
        found.append(StepState(step.number, sorted(facts), set(step.adds), sorted(deleted)))
    for state in found:
        atoms = {_atom(fact) for fact in state.facts}
        state.near = [near for rule in readable if (near := _near(rule, atoms)) is not None]
    return found


def _rule(rule) -> _Rule | None:
    try:
        (expr,) = parse(rule.condition)
    except (SExprError, ValueError):  # a condition we cannot read is not judged
        return None
    parts = list(expr[1:]) if isinstance(expr, SList) and expr and str(expr[0]).lower() == "and" else [expr]
    literals = []
    for part in parts:
        positive = not (isinstance(part, SList) and part and str(part[0]).lower() == "not")
        atom = part if positive else (part[1] if len(part) == 2 else None)
        if (
            not isinstance(atom, SList)
            or not atom
            or any(isinstance(a, SList) for a in atom)
            or str(atom[0]).lower() in ("or", "forall", "exists", "=")
        ):
            return None
        literals.append((positive, tuple(str(a).lower() for a in atom)))
    return _Rule(rule.action, rule.condition, rule.line, literals) if literals else None


def _atom(fact: str) -> tuple[str, ...]:
    return tuple(fact.strip("()").lower().split())


def _near(rule: _Rule, atoms: set[tuple[str, ...]]) -> NearCondition | None:
    """The binding under which the most literals of `rule` hold, when at most one does not."""
    best: tuple[int, dict[str, str]] = (-1, {})
    tried = 0
    positives = [lit for positive, lit in rule.literals if positive]

    def extend(index: int, binding: dict[str, str], held: int) -> None:
        nonlocal best, tried
        tried += 1
        if tried > MAX_BINDINGS or held + (len(positives) - index) <= best[0]:
            return
        if index == len(positives):
            best = max(best, (held, dict(binding)), key=lambda b: b[0])
            return
        literal = positives[index]
        for atom in atoms:
            if len(atom) == len(literal) and atom[0] == literal[0]:
                trial = dict(binding)
                if all(_bind(trial, want, have) for want, have in zip(literal[1:], atom[1:], strict=True)):
                    extend(index + 1, trial, held + 1)
        extend(index + 1, binding, held)  # this literal left unmet

    extend(0, {}, 0)
    binding = best[1]
    missing = []
    for positive, literal in rule.literals:
        bound = tuple(binding.get(part, part) for part in literal)
        holds = bound in atoms if positive else (bound not in atoms or any(p.startswith("?") for p in bound))
        if not holds:
            missing.append(_show(bound) if positive else f"(not {_show(bound)})")
    if len(missing) > 1 or (len(rule.literals) == 1 and missing):
        return None
    bound_text = " ".join(_show(tuple(binding.get(p, p) for p in lit)) for _, lit in rule.literals)
    return NearCondition(rule.action, rule.condition, rule.line, bound_text, missing)


def _bind(binding: dict[str, str], want: str, have: str) -> bool:
    if not want.startswith("?"):
        return want == have
    if binding.setdefault(want, have) != have:
        return False
    return True


def _show(atom: tuple[str, ...]) -> str:
    return "(" + " ".join(atom) + ")"
