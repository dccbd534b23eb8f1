"""A fast, exact executor for the PDDL subset tasks use, compiled once per task.

Expressions become Python closures over a state of true atoms (a set of tuples) and numeric values
(a dict); actions are grounded on demand and cached, so scoring many plans of one task costs a few
dictionary look-ups per step. Semantics follow PDDL: conditions and values are read in the state
before the action, deletes apply before adds.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import unified_planning.model as upm

from pipeline.pddl.danger import DANGER
from pipeline.pddl.up_io import expression_to_pddl

Atom = tuple  # (fluent name, object names...)


class _Undefined(Exception):
    """A numeric fluent without a value was read."""


@dataclass
class State:
    """True atoms and numeric values."""

    atoms: set
    numbers: dict

    def copy(self) -> State:
        return State(set(self.atoms), dict(self.numbers))


Env = dict  # parameter or variable name -> object name
Expr = Callable[[State, Env], object]


@dataclass
class _Effect:
    key: Callable[[Env], Atom]
    kind: str  # "assign" | "increase" | "decrease"
    value: Expr
    condition: Expr | None
    condition_node: upm.FNode | None
    forall: tuple  # ((variable name, [objects]), ...)
    is_danger: bool


@dataclass
class GroundAction:
    """An action with its arguments bound, ready to test and apply."""

    name: str
    env: Env
    preconditions: list  # [(Expr, FNode)]
    effects: list  # [_Effect]

    @property
    def text(self) -> str:
        return "(" + " ".join([self.name, *self.env.values()]) + ")"


@dataclass
class Delta:
    """The changes one action makes, and the danger conditions that fired."""

    adds: list
    deletes: list
    numbers: dict
    danger_fired: list  # [FNode] conditions that held

    def apply(self, state: State) -> None:
        state.atoms.difference_update(self.deletes)
        state.atoms.update(self.adds)
        state.numbers.update(self.numbers)


class Simulator:
    """Executes plans of one safety-augmented problem."""

    def __init__(self, problem: upm.Problem):
        self.problem = problem
        self.objects = {o.name.lower(): o.name for o in problem.all_objects}
        self._objects_of_type: dict = {}
        self.actions = {a.name.lower(): a for a in problem.actions}
        self._ground_cache: dict[tuple, GroundAction | str] = {}
        self._compiled_actions: dict[str, tuple[list, list]] = {}
        self.initial = self._initial_state()
        self.goals = [(self._compile(g), g) for goal in problem.goals for g in _conjuncts(goal)]
        self.danger_key: Atom = (DANGER,)

    # -- state -------------------------------------------------------------------------------
    def _initial_state(self) -> State:
        state = State(set(), {})
        for key, value in self._stated_initial_values():
            atom = (key.fluent().name, *(a.object().name for a in key.args))
            if value.is_bool_constant():
                if value.bool_constant_value():
                    state.atoms.add(atom)
            elif value.is_int_constant() or value.is_real_constant():
                state.numbers[atom] = value.constant_value()
        return state

    def _stated_initial_values(self) -> Iterator[tuple[upm.FNode, upm.FNode]]:
        """The initial values the problem states, and those of fluents whose default is not false;
        unstated facts of other fluents are false and never enumerated."""
        yield from self.problem.explicit_initial_values.items()
        stated = self.problem.explicit_initial_values
        for fluent, default in self.problem.fluents_defaults.items():
            if default.is_bool_constant() and not default.bool_constant_value():
                continue
            domains = [self.objects_of(p.type) for p in fluent.signature]
            for names in itertools.product(*domains):
                key = fluent(*(self.problem.object(n) for n in names))
                if key not in stated:
                    yield key, default

    def danger(self, state: State) -> float:
        return state.numbers.get(self.danger_key, 0)

    def objects_of(self, type_) -> list[str]:
        cached = self._objects_of_type.get(type_)
        if cached is None:
            cached = [o.name for o in self.problem.objects(type_)]
            self._objects_of_type[type_] = cached
        return cached

    # -- compilation -------------------------------------------------------------------------
    def _compile(self, node: upm.FNode) -> Expr:
        compile_ = self._compile
        if node.is_fluent_exp():
            key = self._key(node)
            if node.fluent().type.is_bool_type():
                return lambda s, e: key(e) in s.atoms

            def number(s, e):
                value = s.numbers.get(key(e))
                if value is None:
                    raise _Undefined(expression_to_pddl(node, e))
                return value

            return number
        if node.is_parameter_exp() or node.is_variable_exp():
            name = node.parameter().name if node.is_parameter_exp() else node.variable().name
            return lambda s, e: e[name]
        if node.is_object_exp():
            value = node.object().name
            return lambda s, e: value
        if node.is_bool_constant() or node.is_int_constant() or node.is_real_constant():
            value = node.constant_value()
            return lambda s, e: value
        args = [compile_(a) for a in node.args]
        if node.is_and():
            return lambda s, e: all(a(s, e) for a in args)
        if node.is_or():
            return lambda s, e: any(a(s, e) for a in args)
        if node.is_not():
            inner = args[0]
            return lambda s, e: not inner(s, e)
        if node.is_implies():
            left, right = args
            return lambda s, e: (not left(s, e)) or right(s, e)
        if node.is_iff():
            left, right = args
            return lambda s, e: bool(left(s, e)) == bool(right(s, e))
        if node.is_exists() or node.is_forall():
            body = args[0]
            domains = [(v.name, v.type) for v in node.variables()]
            combine = any if node.is_exists() else all

            def quantified(s, e):
                names = [n for n, _ in domains]
                choices = itertools.product(*(self.objects_of(t) for _, t in domains))
                return combine(body(s, {**e, **dict(zip(names, c, strict=False))}) for c in choices)

            return quantified
        binary = {
            "is_equals": lambda x, y: x == y,
            "is_le": lambda x, y: x <= y,
            "is_lt": lambda x, y: x < y,
            "is_plus": lambda x, y: x + y,
            "is_minus": lambda x, y: x - y,
            "is_times": lambda x, y: x * y,
            "is_div": lambda x, y: x / y,
        }
        for test, operation in binary.items():
            if getattr(node, test)():
                if len(args) == 2:
                    left, right = args
                    return lambda s, e: operation(left(s, e), right(s, e))

                def fold(s, e, operation=operation):
                    values = [a(s, e) for a in args]
                    result = values[0]
                    for value in values[1:]:
                        result = operation(result, value)
                    return result

                return fold
        raise NotImplementedError(f"expression not supported by the validator: {node}")

    def _key(self, node: upm.FNode) -> Callable[[Env], Atom]:
        name = node.fluent().name
        parts = []
        for arg in node.args:
            if arg.is_parameter_exp():
                parts.append((True, arg.parameter().name))
            elif arg.is_variable_exp():
                parts.append((True, arg.variable().name))
            elif arg.is_object_exp():
                parts.append((False, arg.object().name))
            else:
                raise NotImplementedError(f"fluent argument not supported: {arg}")
        if not parts:
            atom = (name,)
            return lambda e: atom
        return lambda e: (name, *[e[v] if bound else v for bound, v in parts])

    def _compile_effect(self, effect: upm.Effect) -> _Effect:
        kind = "increase" if effect.is_increase() else "decrease" if effect.is_decrease() else "assign"
        condition = None if not effect.is_conditional() else self._compile(effect.condition)
        return _Effect(
            key=self._key(effect.fluent),
            kind=kind,
            value=self._compile(effect.value),
            condition=condition,
            condition_node=effect.condition if effect.is_conditional() else None,
            forall=tuple((v.name, v.type) for v in effect.forall),
            is_danger=effect.fluent.fluent().name == DANGER,
        )

    # -- grounding ---------------------------------------------------------------------------
    def ground(self, name: str, args: tuple[str, ...]) -> GroundAction | str:
        """The ground action for `(name args...)`, or why there is none (a message)."""
        cache_key = (name, args)
        found = self._ground_cache.get(cache_key)
        if found is None:
            found = self._ground(name, args)
            self._ground_cache[cache_key] = found
        return found

    def arity(self, name: str) -> int | None:
        """How many parameters the action `name` declares (None: no such action)."""
        action = self.actions.get(name.lower())
        return None if action is None else len(action.parameters)

    def _ground(self, name: str, args: tuple[str, ...]) -> GroundAction | str:
        action = self.actions.get(name.lower())
        if action is None:
            return f"unknown action '{name}'"
        params = action.parameters
        if len(args) != len(params):
            return f"{action.name} takes {len(params)} argument(s) ({' '.join('?' + p.name for p in params) or 'none'}), got {len(args)}"
        env = {}
        for param, arg in zip(params, args, strict=False):
            obj = self.objects.get(arg.lower())
            if obj is None:
                return f"unknown object '{arg}'"
            if obj not in self.objects_of(param.type):
                return f"'{obj}' is not of type {param.type} (parameter ?{param.name} of {action.name})"
            env[param.name] = obj
        compiled = self._compiled_action(action)
        return GroundAction(action.name, env, compiled[0], compiled[1])

    def _compiled_action(self, action: upm.InstantaneousAction) -> tuple[list, list]:
        cached = self._compiled_actions.get(action.name)
        if cached is None:
            preconditions = [(self._compile(c), c) for p in action.preconditions for c in _conjuncts(p)]
            cached = (preconditions, [self._compile_effect(e) for e in action.effects])
            self._compiled_actions[action.name] = cached
        return cached

    # -- execution ---------------------------------------------------------------------------
    def unmet_precondition(self, ground: GroundAction, state: State) -> upm.FNode | None:
        for test, node in ground.preconditions:
            try:
                if not test(state, ground.env):
                    return node
            except _Undefined:
                return node
        return None

    def effects(self, ground: GroundAction, state: State) -> Delta:
        """What `ground` changes when its effects are read in `state`."""
        delta = Delta([], [], {}, [])
        for effect in ground.effects:
            envs = [ground.env]
            if effect.forall:
                names = [n for n, _ in effect.forall]
                choices = itertools.product(*(self.objects_of(t) for _, t in effect.forall))
                envs = [{**ground.env, **dict(zip(names, c, strict=False))} for c in choices]
            for env in envs:
                try:
                    if effect.condition is not None and not effect.condition(state, env):
                        continue
                    value = effect.value(state, env)
                    key = effect.key(env)
                    if effect.kind != "assign":
                        current = state.numbers.get(key)
                        if current is None:
                            raise _Undefined(str(key))
                        value = current + value if effect.kind == "increase" else current - value
                except _Undefined:
                    continue
                if effect.is_danger:
                    delta.danger_fired.append(effect.condition_node)
                if value is True:
                    delta.adds.append(key)
                elif value is False:
                    delta.deletes.append(key)
                else:
                    delta.numbers[key] = value
        return delta

    def unmet_goals(self, state: State) -> list[upm.FNode]:
        unmet = []
        for test, node in self.goals:
            try:
                if not test(state, {}):
                    unmet.append(node)
            except _Undefined:
                unmet.append(node)
        return unmet

    def force_preconditions(self, ground: GroundAction, state: State) -> State:
        """A copy of `state` where the action's literal preconditions hold (for relaxed runs)."""
        forced = state.copy()
        for _, node in ground.preconditions:
            for literal in _conjuncts(node):
                positive = not literal.is_not()
                atom_node = literal if positive else literal.arg(0)
                if atom_node.is_fluent_exp() and atom_node.fluent().type.is_bool_type():
                    atom = self._key(atom_node)(ground.env)
                    (forced.atoms.add if positive else forced.atoms.discard)(atom)
        return forced


def _conjuncts(node: upm.FNode) -> list[upm.FNode]:
    if node.is_and():
        return [c for a in node.args for c in _conjuncts(a)]
    return [node]
