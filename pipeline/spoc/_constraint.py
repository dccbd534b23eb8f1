"""Choosing the SPOC constraint that states a task's danger.

The danger the unsafe reference plan raises first, in SPOC terms (its facts, what is in or on
each object, what the danger action changes), gives candidate constraints (_kinds.py). The first
that fits is kept: the safe reference plan meets it and the unsafe one triggers it; every plan the
validator scores 2 meets it, its window N then the largest SPOC step counter such a plan reaches
(_window.py); and the unsafe reference plan violates it. Each candidate that does not fit says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from safeforge.common.errors import SafeforgeError
from safeforge.spoc import _vocabulary as vocab
from safeforge.spoc._kinds import Fact, Kind, Relation, candidates
from safeforge.spoc._mapping import Literal, Snapshot, ThorView, literals
from safeforge.spoc._semantics import evaluate
from safeforge.spoc._window import NoWindow, window
from safeforge.task.folder import Task


class NotExportable(SafeforgeError):
    """Why a task has no SPOC counterpart."""


def danger_of(view: ThorView, fired: list) -> tuple[list[Fact], dict[str, list[Relation]], set[tuple[str, str]], str]:
    """The first danger of the unsafe plan in SPOC terms: its (object, state, value) facts (those
    of its condition, then the states the danger action gives the objects it names), what is in or
    on each object (the condition's own facts, then what the danger action puts in or takes out),
    the (object, state) pairs the danger action changes, and the danger described."""
    for step, (ground, delta) in enumerate(fired, start=1):
        if not delta.danger_fired:
            continue
        found: list[Literal] = []
        for condition in delta.danger_fired:
            found += literals(condition, ground.env) or []
        facts = [f for literal in found for f in (view.facts(literal) or [])]
        described = (
            "; ".join(f"({' '.join(lit.atom)})" if lit.positive else f"(not ({' '.join(lit.atom)}))" for lit in found)
            or "a condition that is not a conjunction of literals"
        )
        named = {o for o, *_ in facts} | {str(v) for _, key, v in facts if key == "parent"}
        changes = [
            fact
            for atoms, positive in ((delta.adds, True), (delta.deletes, False))
            for atom in atoms
            if atom[0] in view.unary and atom[1] in named
            for fact in view.facts(Literal(atom, positive)) or []
        ]
        moved = [
            (_parent_child(view, atom), "taken" if removed else "put")
            for atoms, removed in ((delta.adds, False), (delta.deletes, True))
            for atom in atoms
            if atom[0] in view.relations and len(atom) == 3 and all(a in view.objects for a in atom[1:])
        ]
        relations: dict[str, list[Relation]] = {}
        for obj in dict.fromkeys(o for o, *_ in facts + changes):
            linked = [Relation("child", c) for c, key, parent in facts if key == "parent" and parent == obj]
            linked += [Relation("child", child, how) for (parent, child), how in moved if parent == obj]
            linked += [Relation("parent", str(parent)) for o, key, parent in facts if key == "parent" and o == obj]
            relations[obj] = list(dict.fromkeys(linked))
        described = f"the unsafe plan's danger at step {step} ({ground.text}: {described})"
        return facts + changes, relations, {(o, key) for o, key, _ in changes}, described
    raise NotExportable("the unsafe reference plan raises no danger")


def _parent_child(view: ThorView, atom) -> tuple[str, str]:
    name, first, second = atom
    return (second, first) if view.relations[name] == "child_in_parent" else (first, second)


@dataclass
class Plans:
    """The states SPOC checks while each reference plan runs (`skill_trace`)."""

    safe: list[Snapshot]
    unsafe: list[Snapshot]


def _condition(kind: Kind, view: ThorView) -> dict:
    object_type = view.objects[kind.obj]
    constrained = vocab.controller(object_type, kind.state[0]) or object_type
    condition: dict = {"condition_type": kind.condition_type}
    if kind.condition_type == "step":
        condition["condition_value"] = None
    condition |= {"condition_object": constrained, "trigger_state": kind.trigger}
    if kind.condition_type == "condition":
        condition["avoid_state"] = kind.avoid
    return condition | {"goal_condition": kind.goal}


Rules = Callable[[Kind, dict], str | None]  # why a file with this constraint breaks SPOC's rules, or None


def _fits(task: Task, view: ThorView, kind: Kind, plans: Plans, rules: Rules) -> tuple[dict, str | None]:
    """The requirement_condition of `kind` with its window, and why it does not fit the task
    (None when it does): SPOC's rules on the file first, then the reference plans (the safe one
    must meet it, the unsafe one trigger it), then every plan scoring 2 (_window.py), then the
    unsafe plan must violate it."""
    condition = _condition(kind, view)
    broken = rules(kind, {**condition, "condition_value": 0} if kind.condition_type == "step" else condition)
    if broken is not None:
        return condition, broken
    instances = [o for o, t in view.objects.items() if t == view.objects[kind.obj]]
    lenient = {**condition, "condition_value": 10**9} if kind.condition_type == "step" else condition
    safe, unsafe = evaluate(view, plans.safe, instances, lenient), evaluate(view, plans.unsafe, instances, lenient)
    if not safe.triggered:
        return condition, "the safe reference plan never triggers it"
    if safe.violated_at is not None:
        return condition, f"the safe reference plan meets its avoided state (SPOC check {safe.violated_at})"
    if safe.tracked_at_end:
        return condition, "the safe reference plan ends with it still tracked"
    if not unsafe.triggered:
        return condition, "the unsafe reference plan never triggers it"
    try:
        steps = window(task, view, instances, condition)
    except NoWindow as exc:
        return condition, str(exc)
    if steps is not None:
        condition["condition_value"] = steps
    if evaluate(view, plans.unsafe, instances, condition).met:
        return condition, f"the unsafe reference plan meets it (window {steps}), so SPOC would not tell the plans apart"
    return condition, None


def constraint(task: Task, view: ThorView, plans: Plans, unsafe_fired: list, final: Snapshot, rules: Rules) -> tuple[Kind, dict]:
    """The first way to state the danger that fits the task and passes SPOC's rules (`rules`),
    and its requirement_condition; NotExportable listing every candidate and why it failed."""
    facts, relations, changed, danger = danger_of(view, unsafe_fired)
    involved = {o for o, *_ in facts} | {r.obj for linked in relations.values() for r in linked}
    kinds = candidates(facts, relations, changed, {o: view.spoc_type(o, final) for o in involved})
    if not kinds:
        raise NotExportable(
            f"{danger} has no SPOC counterpart: a SPOC constraint is about one AI2-THOR object's state "
            "(on, open, dirty, filled, broken, cooked) and what is in or on it, and the danger names none"
        )
    reasons = []
    for kind in kinds:
        condition, reason = _fits(task, view, kind, plans, rules)
        if reason is None:
            return kind, condition
        reasons.append(f"{kind.describe(condition['condition_object'])}: {reason}")
    listed = "".join(f"\n- {reason}" for reason in reasons)
    raise NotExportable(f"no SPOC constraint states {danger} as the task does; each candidate, and why it does not fit:{listed}")
