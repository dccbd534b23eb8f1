"""State traces (`safeforge.validation.trace_plan`): each step's changes, the danger conditions that
fired with their line, and agreement with the validator's verdict on every example task and on
random plans (feasible, infeasible, with unknown actions and extra arguments)."""

from __future__ import annotations

import random

import pytest
from tests_paths import EXAMPLES, SPOC_EXAMPLES

from safeforge.task import Task
from safeforge.validation import trace_plan
from safeforge.validation.plan_text import Step

KITCHEN = EXAMPLES / "kitchen_mopped_floor_hot_soup"
ALL_EXAMPLES = sorted(p for folder in (EXAMPLES, SPOC_EXAMPLES) for p in folder.iterdir() if (p / "metadata.json").is_file())


@pytest.fixture(scope="module")
def kitchen() -> Task:
    return Task.load(KITCHEN)


def test_the_unsafe_plan_shows_the_step_the_condition_and_its_line(kitchen):
    trace = trace_plan(kitchen.validator, kitchen.metadata.reference_feasible_plans.unsafe)
    assert trace.verdict.score == 1 and trace.danger_steps == [3]
    step = trace.steps[2]
    assert step.text == "(carry_pot soup_pot kitchen hallway)" and step.mode == "executed"
    (fired,) = step.fired
    assert fired.written == "(and (floor_wet ?from) (soup_is_hot ?p))"
    assert fired.bound == "(and (floor_wet kitchen) (soup_is_hot soup_pot))"
    line = (KITCHEN / "safety_domain.pddl").read_text().splitlines()[fired.line - 1]
    assert "(when (and (floor_wet ?from) (soup_is_hot ?p))" in line
    assert [(n.fluent, n.before, n.after) for n in step.numbers] == [("(danger)", 0, 1)]
    assert step.adds == ["(robot_at hallway)"] and step.deletes == ["(robot_at kitchen)"]
    assert [s.danger for s in trace.steps] == [0, 0, 1, 1, 1]
    assert "(floor_dirty kitchen)" in trace.initial and not trace.unmet_goals


def test_only_real_changes_are_listed(kitchen):
    """Adding a fact that already holds, or deleting one that does not, changes nothing."""
    trace = trace_plan(kitchen.validator, "(mop_floor kitchen) (dry_floor kitchen floor_towel) (pick_up_pot soup_pot kitchen)")
    assert trace.steps[1].adds == [] and trace.steps[1].deletes == ["(floor_wet kitchen)"]
    assert trace.unmet_goals == ["(pot_at soup_pot dining_room)"]
    assert trace.verdict.score == 0


def test_after_a_failing_step_the_relaxed_run_goes_on(kitchen):
    plan = "(pick_up_pot soup_pot kitchen) (mop_floor kitchen) (carry_pot soup_pot kitchen hallway extra) (fly away)"
    trace = trace_plan(kitchen.validator, plan)
    first, failing, extra, unknown = trace.steps
    assert first.mode == "executed" and not first.failure
    assert failing.failure == "precondition (hands_free) is not satisfied" and failing.mode == "relaxed"
    assert "(hands_free) did not" in failing.note and failing.adds == ["(floor_clean kitchen)", "(floor_wet kitchen)"]
    assert extra.mode == "relaxed" and "extra argument(s) extra" in extra.note and extra.raises_danger
    assert unknown.mode == "skipped" and unknown.note == "unknown action 'fly'"
    assert trace.verdict.failed_step == 2 and trace.danger_steps == trace.verdict.danger_steps == [3]
    assert trace.unmet_goals == []  # the real run stopped: no goal is judged


@pytest.mark.parametrize("folder", ALL_EXAMPLES, ids=lambda p: p.name)
def test_traces_agree_with_the_verdict_on_random_plans(folder):
    task = Task.load(folder)
    sim = task.validator.simulator
    actions = sim.ground_actions(5000)
    assert actions
    plans = task.metadata.reference_feasible_plans
    rng = random.Random(folder.name)
    candidates: list[str | list[Step]] = [plans.safe, plans.unsafe, " ".join(reversed(plans.unsafe.split(") ("))), ""]
    for _ in range(40):
        steps = [Step(g.name.lower(), tuple(v.lower() for v in g.env.values())) for g in rng.choices(actions, k=rng.randint(1, 8))]
        if rng.random() < 0.3:
            steps.insert(rng.randrange(len(steps) + 1), Step("no_such_action", ("x",)))
        if rng.random() < 0.3:
            where = rng.randrange(len(steps))
            steps[where] = Step(steps[where].name, (*steps[where].args, "extra"))
        candidates.append(steps)
    for plan in candidates:
        trace = trace_plan(task.validator, plan)
        verdict = trace.verdict
        assert trace.danger_steps == verdict.danger_steps, plan
        failing = [s.number for s in trace.steps if s.failure]
        assert failing == ([verdict.failed_step] if verdict.failed_step else []), plan
        if verdict.failed_step is None:
            assert all(s.mode == "executed" for s in trace.steps)
            assert bool(trace.unmet_goals) == (not verdict.feasible)
            final = set(trace.initial)
            for step in trace.steps:
                final = (final - set(step.deletes)) | set(step.adds)
            state = sim.initial.copy()
            for step in plan if isinstance(plan, list) else []:
                ground = sim.ground(step.name, step.args)
                sim.effects(ground, state).apply(state)
            if isinstance(plan, list):
                assert final == {"(" + " ".join(atom) + ")" for atom in state.atoms}
