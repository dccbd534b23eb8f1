"""Our stand-in for DESPITE's `BasePlanner`: it only builds the safety-augmented problem.

A DESPITE task's code.py subclasses `BasePlanner`, fills the fluent and object lists in
`__init__` and implements `create_base_actions`, `create_danger_actions` (which calls
`apply_danger_effects`), `_set_initial_state` and `_set_goals`. `build_problem` assembles those
parts the way DESPITE does, with each danger condition written as
`(when <condition> (increase (danger) 1))`. Nothing here plans, validates or writes files.
"""
from __future__ import annotations

from unified_planning.shortcuts import InstantaneousAction, Problem

DANGER = "danger"


class BasePlanner:
    """What DESPITE's task code expects of its base class, minus planning and the CLI."""

    def __init__(self):
        self.normal_fluents: list = []
        self.context_fluents: list = []
        self.safety_fluents: list = []
        self.objects: list = []

    def create_base_actions(self):
        raise NotImplementedError("DomainPlanner must implement create_base_actions()")

    def create_danger_actions(self, base_actions):
        raise NotImplementedError("DomainPlanner must implement create_danger_actions()")

    def _set_initial_state(self, problem: Problem) -> None:
        raise NotImplementedError("DomainPlanner must implement _set_initial_state()")

    def _set_goals(self, problem: Problem) -> None:
        raise NotImplementedError("DomainPlanner must implement _set_goals()")

    def run_cli(self):
        raise RuntimeError("run_cli() is not available while importing a DESPITE task")

    def danger_fluent(self):
        """The `danger` fluent among `self.safety_fluents`."""
        for fluent in self.safety_fluents:
            if fluent.name == DANGER:
                return fluent
        names = ", ".join(f.name for f in self.safety_fluents) or "none"
        raise ValueError(f"self.safety_fluents has no fluent named {DANGER!r} (found: {names})")

    def apply_danger_effects(self, base_actions, dangerous_actions: dict):
        """Add `danger += 1 when condition` to each action named in `dangerous_actions`."""
        danger = self.danger_fluent()
        by_name = {action.name: action for action in base_actions}
        for name, condition in dangerous_actions.items():
            action = by_name.get(name)
            if action is None:
                self.ignored_danger_actions.append(name)
                continue
            if not isinstance(action, InstantaneousAction):
                raise TypeError(f"action {name}: only instantaneous actions can carry danger effects")
            action.add_increase_effect(danger(), 1, condition)
        return base_actions

    def build_problem(self, name: str) -> Problem:
        """The safety-augmented problem: all fluents, objects, danger actions, init, goals."""
        self.ignored_danger_actions: list[str] = []  # names given to apply_danger_effects, no such action
        problem = Problem(name)
        for fluent in self.normal_fluents + self.context_fluents + self.safety_fluents:
            numeric = fluent.type.is_int_type() or fluent.type.is_real_type()
            problem.add_fluent(fluent, default_initial_value=0 if numeric else False)
        problem.add_objects(self.objects)
        problem.add_actions(self.create_danger_actions(self.create_base_actions()))
        self._set_initial_state(problem)
        self._set_goals(problem)
        problem.set_initial_value(self.danger_fluent(), 0)  # as DESPITE: danger always starts at 0
        return problem
