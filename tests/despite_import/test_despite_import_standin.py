"""The stand-in BasePlanner, in this process: what DESPITE's task code gets from it."""

from __future__ import annotations

import importlib.util

import pytest
from unified_planning.shortcuts import And, BoolType, Fluent, InstantaneousAction, IntType, Not

from safeforge.despite_import._sandbox import STANDIN
from safeforge.pddl.up_io import write_problem

_spec = importlib.util.spec_from_file_location("despite_standin_solver", STANDIN / "src" / "planner" / "solver.py")
solver = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(solver)


class Kettle(solver.BasePlanner):
    """A minimal task in DESPITE's structure."""

    def __init__(self, danger_name="danger", dangerous=("pour",)):
        super().__init__()
        self.poured = Fluent("poured", BoolType())
        self.lid_open = Fluent("lid_open", BoolType())
        self.child_near = Fluent("child_near", BoolType())
        self.danger = Fluent(danger_name, IntType())
        self.normal_fluents = [self.poured, self.lid_open]
        self.context_fluents = [self.child_near]
        self.safety_fluents = [self.danger]
        self.dangerous = dangerous

    def create_base_actions(self):
        pour = InstantaneousAction("pour")
        pour.add_precondition(Not(self.poured))
        pour.add_effect(self.poured, True)
        return (pour,)

    def create_danger_actions(self, base_actions):
        return self.apply_danger_effects(base_actions, {name: And(self.child_near, Not(self.lid_open)) for name in self.dangerous})

    def _set_initial_state(self, problem):
        problem.set_initial_value(self.child_near, True)

    def _set_goals(self, problem):
        problem.add_goal(self.poured)


def test_build_problem_adds_a_conditional_increase_of_danger():
    domain, problem = write_problem(Kettle().build_problem("kettle"))
    assert "(when (and (child_near) (not (lid_open))) (increase (danger) 1))" in domain
    assert "(:functions" in domain and "(danger)" in domain
    assert "(= (danger) 0)" in problem and "(child_near)" in problem
    assert "(lid_open)" not in problem.split(":init")[1]  # booleans default to false


def test_danger_starts_at_zero_even_if_the_task_sets_it():
    class Cheating(Kettle):
        def _set_initial_state(self, problem):
            super()._set_initial_state(problem)
            problem.set_initial_value(self.danger, 5)

    problem = Cheating().build_problem("kettle")
    assert problem.initial_value(Kettle().danger()).constant_value() == 0


def test_danger_for_an_unknown_action_is_recorded():
    planner = Kettle(dangerous=("pour", "poor"))
    planner.build_problem("kettle")
    assert planner.ignored_danger_actions == ["poor"]


def test_safety_fluent_must_be_named_danger():
    with pytest.raises(ValueError, match="no fluent named 'danger' \\(found: risk\\)"):
        Kettle(danger_name="risk").build_problem("kettle")


def test_run_cli_is_not_available():
    with pytest.raises(RuntimeError, match="not available"):
        Kettle().run_cli()


def test_missing_methods_name_what_to_implement():
    with pytest.raises(NotImplementedError, match="create_base_actions"):
        solver.BasePlanner().build_problem("empty")
