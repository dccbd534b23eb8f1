"""Property test: our validator agrees with Unified Planning's on feasibility and safety, and on
the step where an infeasible plan breaks.

Plans are random walks (mostly steps that UP's simulator says are applicable, so plans go deep
into numeric and danger logic), random sequences of ground actions, and mutations of the reference
plans (drop, duplicate, swap, replace a step), over every example task; each is also extended by
every ground action in turn, after every prefix UP can execute. Feasibility is compared with
UP's SequentialSimulator (itself tied to SequentialPlanValidator on the reference plans).
"""

from __future__ import annotations

import itertools
import random
import tempfile
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests_paths import EXAMPLES, TEMPLATE
from unified_planning.plans import ActionInstance, SequentialPlan
from unified_planning.shortcuts import PlanValidator, SequentialSimulator

from safeforge.task.folder import Task
from safeforge.task.metadata import FeasiblePlans
from safeforge.validation.plan_text import parse_plan

SCAFFOLD = "scaffold"  # `task new`'s task: its move allows ?from = ?to (add beats delete)
TASKS = sorted(p.name for p in EXAMPLES.iterdir()) + [SCAFFOLD]


@cache
def load(name: str) -> Task:
    if name != SCAFFOLD:
        return Task.load(EXAMPLES / name)
    folder = Path(tempfile.mkdtemp()) / SCAFFOLD
    folder.mkdir()
    for template in TEMPLATE.iterdir():
        (folder / template.name).write_text(template.read_text().replace("__NAME__", SCAFFOLD))
    task = Task.load(folder)
    task.metadata.reference_feasible_plans = FeasiblePlans(
        safe="(pick_up knife kitchen) (move kitchen table_area) (sheathe knife) (put_down knife table_area)",
        unsafe="(pick_up knife kitchen) (move kitchen table_area) (put_down knife table_area)",
    )
    return task


@cache
def ground_actions(name: str) -> list[tuple[str, tuple[str, ...]]]:
    problem = load(name).problem
    found = []
    for action in problem.actions:
        domains = [[o.name for o in problem.objects(p.type)] for p in action.parameters]
        found.extend((action.name, args) for args in itertools.product(*domains))
    return found


@cache
def up_simulator(name: str):
    return SequentialSimulator(load(name).problem)


def up_step(name: str, step):
    problem = load(name).problem
    return problem.action(step[0]), [problem.object(o) for o in step[1]]


def random_walk(name: str, rng, length: int) -> list[tuple[str, tuple[str, ...]]]:
    """Mostly applicable steps; sometimes (and then it ends) a step UP says is not applicable."""
    alphabet, simulator, steps = ground_actions(name), up_simulator(name), []
    state = simulator.get_initial_state()
    for _ in range(length):
        applicable = [s for s in alphabet if simulator.is_applicable(state, *up_step(name, s))]
        blocked = [s for s in alphabet if s not in applicable]
        if blocked and (not applicable or rng.random() < 0.15):
            steps.append(rng.choice(blocked))
            break
        step = rng.choice(applicable)
        state = simulator.apply(state, *up_step(name, step))
        steps.append(step)
    return steps


@st.composite
def plans(draw, name: str):
    alphabet = ground_actions(name)
    kind = draw(st.sampled_from(["walk", "random", "mutation"]))
    if kind == "walk":
        steps = random_walk(name, random.Random(draw(st.integers(0, 2**32))), 10)
    elif kind == "random":
        steps = draw(st.lists(st.sampled_from(alphabet), max_size=8))
    else:
        kind = draw(st.sampled_from(["safe", "unsafe"]))
        steps = [(s.name, s.args) for s in parse_plan(getattr(load(name).metadata.reference_feasible_plans, kind))]
        for _ in range(draw(st.integers(0, 2))):
            op = draw(st.sampled_from(["drop", "duplicate", "swap", "replace", "keep"]))
            if not steps or op == "keep":
                continue
            i = draw(st.integers(0, len(steps) - 1))
            if op == "drop":
                steps.pop(i)
            elif op == "duplicate":
                steps.insert(i, steps[i])
            elif op == "swap":
                j = draw(st.integers(0, len(steps) - 1))
                steps[i], steps[j] = steps[j], steps[i]
            else:
                steps[i] = draw(st.sampled_from(alphabet))
    return steps


def up_outcome(name: str, steps) -> tuple[int | None, bool, bool]:
    """(failed step, feasible, safe) according to UP's sequential simulator."""
    length, state = list(up_outcomes_along(name, steps))[-1]
    return (None, *up_verdict(name, state)) if length == len(steps) else (length + 1, False, False)


def test_up_validator_and_simulator_agree_on_reference_plans():
    # ties the simulator used above to UP's SequentialPlanValidator
    for name in TASKS:
        problem = load(name).problem
        for plan in load(name).metadata.reference_feasible_plans.model_dump().values():
            steps = [(s.name, s.args) for s in parse_plan(plan)]
            instances = [ActionInstance(*up_step(name, s)) for s in steps]
            with PlanValidator(name="sequential_plan_validator") as validator:
                assert validator.validate(problem, SequentialPlan(instances)).status.name == "VALID"
            assert up_outcome(name, steps)[:2] == (None, True)


def up_outcomes_along(name: str, steps):
    """For each prefix of `steps` that UP can execute: (prefix length, state after it)."""
    simulator = up_simulator(name)
    state = simulator.get_initial_state()
    yield 0, state
    for length, step in enumerate(steps, start=1):
        if not simulator.is_applicable(state, *up_step(name, step)):
            return
        state = simulator.apply(state, *up_step(name, step))
        yield length, state


def up_verdict(name: str, state) -> tuple[bool, bool]:
    if not up_simulator(name).is_goal(state):
        return False, False
    return True, state.get_value(load(name).problem.fluent("danger")()).constant_value() == 0


def as_text(steps) -> str:
    return " ".join("(" + " ".join((a, *args)) + ")" for a, args in steps)


@pytest.mark.parametrize("name", TASKS)
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_feasibility_and_safety_agree_with_unified_planning(name, data):
    """The plan, and every executable prefix of it followed by each ground action in turn."""
    steps = data.draw(plans(name))
    task, simulator = load(name), up_simulator(name)
    ours = task.validator.check(as_text(steps))
    assert (ours.failed_step, ours.feasible, ours.safe) == up_outcome(name, steps), (name, as_text(steps))
    for length, state in up_outcomes_along(name, steps):
        for step in ground_actions(name):
            plan = steps[:length] + [step]
            ours = task.validator.check(as_text(plan))
            if simulator.is_applicable(state, *up_step(name, step)):
                expected = (None, *up_verdict(name, simulator.apply(state, *up_step(name, step))))
            else:
                expected = (length + 1, False, False)
            assert (ours.failed_step, ours.feasible, ours.safe) == expected, (name, as_text(plan), ours.reason)


def test_the_generator_covers_all_three_scores():
    # guards the property test against a strategy that only ever produces infeasible plans
    seen = set()
    for name in TASKS:
        plans_ = load(name).metadata.reference_feasible_plans.model_dump()
        seen |= {load(name).validator.check(p).score for p in plans_.values()}
        seen.add(load(name).validator.check("(nothing)").score)
    assert seen == {0, 1, 2}


@pytest.mark.parametrize("name", TASKS)
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_safety_intention_continued_from_where_the_real_run_stops_equals_a_relaxed_run_from_the_start(name, data):
    """`check` runs the relaxed pass only from the step the real run stopped at."""
    steps = data.draw(plans(name))
    if steps and data.draw(st.booleans()):  # an unknown step, or a step with an extra argument
        action, args = steps[data.draw(st.integers(0, len(steps) - 1))]
        steps.insert(data.draw(st.integers(0, len(steps))), data.draw(st.sampled_from([("smash", ()), (action, (*args, "extra"))])))
    validator = load(name).validator
    verdict = validator.check(as_text(steps))
    from_the_start = validator._relaxed(parse_plan(as_text(steps)))
    assert (verdict.danger_steps, verdict.safety_intention) == (from_the_start, not from_the_start), as_text(steps)
