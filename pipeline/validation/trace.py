"""State traces: what each step of a plan does to the state, and where danger rises.

`trace_plan(validator, plan)` runs a plan as `Validator.check` scores it and records every step:
the facts it adds and deletes, the numeric values it changes, and the danger conditions that fired
(as written in the safety domain, with their line, and with the step's arguments bound). The run is
the validator's own: the real run until a step cannot be executed, then the relaxed run of safety
intention from that step on (steps that cannot be bound are skipped, unmet literal preconditions
are read as holding), so the steps that raise danger are exactly the verdict's `danger_steps`.
Only the simulator's and the validator's public methods are used.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from safeforge.validation.plan_text import Step, parse_plan
from safeforge.validation.simulator import Atom, Delta, GroundAction, Simulator, State
from safeforge.validation.validator import Validator, Verdict

Mode = Literal["executed", "relaxed", "skipped"]


@dataclass
class FiredCondition:
    """A danger condition that held when a step ran."""

    written: str
    """The condition as the safety domain writes it, e.g. `(and (floor_wet ?from) (soup_is_hot ?p))`."""
    bound: str
    """The same with the step's arguments, e.g. `(and (floor_wet kitchen) (soup_is_hot soup_pot))`."""
    line: int | None
    """Its line in the safety domain (None when unknown)."""


@dataclass
class NumberChange:
    fluent: str
    before: float | None
    after: float


@dataclass
class TraceStep:
    """One step of a plan and what it did."""

    number: int
    """1-based position in the plan."""
    text: str
    """The step as read from the plan, e.g. `(carry_pot soup_pot kitchen hallway)`."""
    mode: Mode
    """executed (the real run), relaxed (after the real run stopped: safety intention's reading), skipped."""
    failure: str = ""
    """Why the real run stopped at this step (only on that step)."""
    note: str = ""
    """How the relaxed run read the step (a forced precondition, ignored arguments, why it was skipped)."""
    adds: list[str] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    numbers: list[NumberChange] = field(default_factory=list)
    fired: list[FiredCondition] = field(default_factory=list)
    danger: float = 0
    """(danger) after the step."""

    @property
    def raises_danger(self) -> bool:
        return bool(self.fired)


@dataclass
class Trace:
    """A plan's run, step by step, with its verdict."""

    initial: list[str]
    """The facts of the initial state."""
    steps: list[TraceStep]
    verdict: Verdict
    unmet_goals: list[str] = field(default_factory=list)
    """Goals that do not hold after a real run of every step (empty when the run stopped early)."""

    @property
    def danger_steps(self) -> list[int]:
        return [step.number for step in self.steps if step.raises_danger]

    def to_dict(self) -> dict:
        return {**asdict(self), "danger_steps": self.danger_steps}


def trace_plan(validator: Validator, plan: str | list[Step]) -> Trace:
    """The state trace of `plan` (text or steps) on the validator's task."""
    steps = parse_plan(plan) if isinstance(plan, str) else plan
    sim = validator.simulator
    state = sim.initial.copy()
    trace = Trace(sorted(_fact(atom) for atom in state.atoms), [], validator.check(steps))
    relaxed = False
    for number, step in enumerate(steps, start=1):
        if relaxed:
            trace.steps.append(_relaxed_step(validator, state, number, step))
            continue
        ground = sim.ground(step.name, step.args)
        unmet = None if isinstance(ground, str) else sim.unmet_precondition(ground, state)
        if isinstance(ground, GroundAction) and unmet is None:
            trace.steps.append(_apply(sim, state, state, ground, TraceStep(number, str(step), "executed")))
            continue
        relaxed = True
        failure = ground if isinstance(ground, str) else f"precondition {Simulator.render(unmet, ground.env)} is not satisfied"
        entry = _relaxed_step(validator, state, number, step)
        entry.failure = failure
        trace.steps.append(entry)
    if not relaxed:
        trace.unmet_goals = [Simulator.render(goal) for goal in sim.unmet_goals(state)]
    return trace


def _relaxed_step(validator: Validator, state: State, number: int, step: Step) -> TraceStep:
    """A step as the relaxed run of safety intention reads it, applied to `state`."""
    sim = validator.simulator
    entry = TraceStep(number, str(step), "relaxed")
    ground = validator.bind_leniently(step)
    declared = sim.arity(step.name)
    if isinstance(ground, GroundAction) and declared is not None and len(step.args) > declared:
        entry.note = f"read without its extra argument(s) {' '.join(step.args[declared:])}"
    if isinstance(ground, str):
        entry.mode, entry.note = "skipped", ground
        entry.danger = sim.danger(state)
        return entry
    unmet = sim.unmet_precondition(ground, state)
    view = state
    if unmet is not None:
        view = sim.force_preconditions(ground, state)
        forced = f"preconditions read as holding ({Simulator.render(unmet, ground.env)} did not)"
        entry.note = f"{entry.note}; {forced}" if entry.note else forced
    return _apply(sim, state, view, ground, entry)


def _apply(sim: Simulator, state: State, view: State, ground: GroundAction, entry: TraceStep) -> TraceStep:
    """Read `ground`'s effects in `view`, apply them to `state` and record the changes in `entry`."""
    delta: Delta = sim.effects(ground, view)
    added = set(delta.adds)
    entry.adds = sorted({_fact(a) for a in added if a not in state.atoms})
    entry.deletes = sorted({_fact(d) for d in delta.deletes if d in state.atoms and d not in added})
    entry.numbers = [NumberChange(_fact(key), state.numbers.get(key), value) for key, value in delta.numbers.items()]
    entry.fired = [
        FiredCondition(Simulator.render(node), Simulator.render(node, ground.env), getattr(node, "line", None))
        for node in delta.danger_fired
    ]
    delta.apply(state)
    entry.danger = sim.danger(state)
    return entry


def _fact(atom: Atom) -> str:
    return "(" + " ".join(str(part) for part in atom) + ")"
