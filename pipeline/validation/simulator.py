"""A fast, exact executor for the PDDL subset tasks use, compiled once per task.

It works on our own reading of the PDDL (`safeforge.pddl.reader`), never on Unified Planning's model:
expressions become Python closures over a state of true atoms (a set of tuples) and numeric values
(a dict); the initial state is what `:init` states (everything else false or undefined, never
enumerated); actions are grounded on demand and cached, so scoring many plans of one task costs a
few dictionary look-ups per step. Semantics follow PDDL: conditions and values are read in the
state before the action, deletes apply before adds. Unified Planning stays the reference in the
property tests.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from safeforge.common.limits import check_time
from safeforge.pddl.errors import PDDLError
from safeforge.pddl.reader import DANGER, Action, PDDLTask, typed
from safeforge.pddl.sexpr import SExpr, SList, is_number, to_text

Atom = tuple  # (fluent name, object names...)


class _Undefined(Exception):
    """A numeric fluent without a value was read."""


@dataclass(slots=True)
class State:
    """True atoms and numeric values."""

    atoms: set
    numbers: dict

    def copy(self) -> State:
        return State(set(self.atoms), dict(self.numbers))


Env = dict  # parameter or variable name (without '?') -> object name
Expr = Callable[[State, Env], object]


@dataclass
class Effect:
    """One compiled effect of an action schema (its atom or fluent key is a function of the bindings)."""

    key: Callable[[Env], Atom]
    kind: str  # "add" | "delete" | "assign" | "increase" | "decrease" | "scale-up" | "scale-down"
    value: Expr | None
    condition: Expr | None
    condition_node: SExpr | None
    forall: tuple  # ((variable name, type), ...)
    is_danger: bool


@dataclass(slots=True)
class Delta:
    """The changes one action makes, and the danger conditions that fired."""

    adds: list
    deletes: list
    numbers: dict
    danger_fired: list = field(default_factory=list)  # [SExpr] conditions that held

    def apply(self, state: State) -> None:
        if self.deletes:
            state.atoms.difference_update(self.deletes)
        if self.adds:
            state.atoms.update(self.adds)
        if self.numbers:
            state.numbers.update(self.numbers)


@dataclass
class GroundAction:
    """An action with its arguments bound, ready to test and apply. Literal preconditions and
    effects outside `forall` carry their atom, bound once, so a step costs set look-ups."""

    name: str
    env: Env
    preconditions: list  # [(Expr, SExpr, bound atom of a literal or None, positive)]
    effects: list  # [(Effect, bound atom or fluent key, None inside forall)]
    fixed: Delta | None = None  # the delta when every effect is an unconditional add or delete (never mutated)

    @property
    def text(self) -> str:
        return "(" + " ".join([self.name, *self.env.values()]) + ")"


_COMPARE = {"<": lambda x, y: x < y, "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y}
_ARITHMETIC = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y, "/": lambda x, y: x / y}
_UPDATES = {"assign", "increase", "decrease", "scale-up", "scale-down"}


class Simulator:
    """Executes plans of one safety-augmented task."""

    def __init__(self, task: PDDLTask):
        self._declare(task)
        self._compiled = self._compile_actions(task.actions)
        self.initial = State(set(), {})
        for fact in task.init:
            self._add_fact(self.initial, fact)
        assert task.goal is not None
        self.goals = [(self._condition(g, {}, task.problem_file, task.goal_line), g) for g in _conjuncts(task.goal)]
        self.danger_key: Atom = (self._functions.get(DANGER, DANGER),)

    def _declare(self, task: PDDLTask) -> None:
        self.task = task
        self.objects = {name.lower(): name for name in task.objects}
        self.actions: dict[str, Action] = task.actions
        self._predicates = {name.lower(): name for name in task.predicates}
        self._functions = {name.lower(): name for name in task.functions}
        self._objects_of_type: dict[str, list[str]] = {}
        self._type_members: dict[str, frozenset[str]] = {}
        self._ground_cache: dict[tuple, GroundAction | str] = {}

    @classmethod
    def errors(cls, task: PDDLTask) -> list[PDDLError]:
        """What does not compile in `task` (an undeclared name, a malformed expression): one error
        per action, `:init` fact and goal conjunct, where building a Simulator stops at the first."""
        simulator = cls.__new__(cls)
        simulator._declare(task)
        found: list[PDDLError] = []

        def attempt(compile_part: Callable[..., object], *arguments) -> None:
            try:
                compile_part(*arguments)
            except PDDLError as exc:
                found.append(exc)

        for action in task.actions.values():
            attempt(simulator._compile_action, action)
        state = State(set(), {})
        for fact in task.init:
            attempt(simulator._add_fact, state, fact)
        for goal in [] if task.goal is None else _conjuncts(task.goal):
            attempt(simulator._condition, goal, {}, task.problem_file, task.goal_line)
        return found

    # -- state -------------------------------------------------------------------------------
    def _add_fact(self, state: State, fact: SExpr) -> None:
        """An `:init` fact into `state`."""
        file = self.task.problem_file
        line = fact.line if isinstance(fact, SList) else None
        if isinstance(fact, SList) and len(fact) == 3 and _word(fact[0]) == "=":
            key = self._atom_key(fact[1], {}, file, line, numeric=True)({})
            state.numbers[key] = self._number(fact[2], file, line)
        elif isinstance(fact, SList) and fact and _word(fact[0]) != "not":
            state.atoms.add(self._atom_key(fact, {}, file, line, numeric=False)({}))
        elif not (isinstance(fact, SList) and fact and _word(fact[0]) == "not"):
            raise PDDLError(file, f"unexpected {_show(fact)} in :init", line)

    def danger(self, state: State) -> float:
        return state.numbers.get(self.danger_key, 0)

    def objects_of(self, type_name: str) -> list[str]:
        """The objects (and constants) of a type, subtypes included."""
        key = type_name.lower()
        cached = self._objects_of_type.get(key)
        if cached is None:
            cached = self._objects_of_type[key] = self.task.objects_of(key)
        return cached

    def schema(self, action_name: str) -> tuple[list, list[Effect]]:
        """An action's compiled preconditions [(test, conjunct, atom key of a literal or None,
        positive)] and effects, by its lower-case name."""
        return self._compiled[action_name]

    def literal(self, node: SExpr, parameters: dict[str, str]) -> tuple[Callable[[Env], Atom] | None, bool]:
        """(atom key, positive) when `node` is a literal over `parameters` ({name: type}), else (None, True)."""
        return self._literal(node, parameters, self.task.domain_file, getattr(node, "line", None))

    def predicate_name(self, name: str) -> str:
        """A predicate's name as declared (atoms carry it)."""
        return self._predicates.get(name.lower(), name)

    @staticmethod
    def holds(test: Expr, state: State, env: Env) -> bool:
        """Whether a compiled condition holds (false where it reads an undefined number)."""
        try:
            return bool(test(state, env))
        except _Undefined:
            return False

    def twins(self) -> set[str]:
        """The actions (lower-case names) written exactly as an earlier one but for the name: each
        changes a state as that one does, so a search may skip them."""
        seen: set[int] = set()
        found = set()
        for key, compiled in self._compiled.items():
            if id(compiled) in seen:
                found.add(key)
            seen.add(id(compiled))
        return found

    # -- compilation -------------------------------------------------------------------------
    def _compile_actions(self, actions: dict[str, Action]) -> dict[str, tuple[list, list]]:
        """Every action compiled; actions written alike but for the name share one compilation (a
        compilation does not depend on the name, and an error names the first of them)."""
        compiled: dict[str, tuple[list, list]] = {}
        by_body: dict[tuple, tuple[list, list]] = {}
        for key, action in actions.items():
            body = (tuple(action.parameters), repr(action.precondition), repr(action.effect))
            found = by_body.get(body)
            if found is None:
                found = by_body[body] = self._compile_action(action)
            compiled[key] = found
        return compiled

    def _compile_action(self, action: Action) -> tuple[list, list]:
        """[(test, conjunct, atom key of a literal or None, positive)], [Effect]."""
        check_time("compiling the actions")
        file = self.task.domain_file
        scope = {name: type_name for name, type_name in action.parameters}
        preconditions = [] if action.precondition is None else [
            (self._condition(c, scope, file, action.line), c, *self._literal(c, scope, file, action.line))
            for c in _conjuncts(action.precondition)
        ]  # fmt: skip
        effects: list[Effect] = []
        if action.effect is not None:
            self._effects(action.effect, scope, None, None, (), effects, file, action.line)
        return preconditions, effects

    def _literal(self, node: SExpr, scope: dict[str, str], file: str, line: int | None) -> tuple[Callable[[Env], Atom] | None, bool]:
        """(atom key, positive) when `node` is a literal `(p ...)` or `(not (p ...))`, else (None, True)."""
        positive = not (isinstance(node, SList) and len(node) == 2 and _word(node[0]) == "not")
        atom = node if positive else node[1]
        if isinstance(atom, SList) and atom and (head := _word(atom[0])) in self._predicates and head not in self._functions:
            return self._atom_key(atom, scope, file, line, numeric=False), positive
        return None, True

    def _condition(self, node: SExpr, scope: dict[str, str], file: str, line: int | None) -> Expr:
        """A closure for a condition or numeric expression; PDDLError for what is not declared."""
        line = getattr(node, "line", 0) or line
        if isinstance(node, str):
            if node.startswith("?"):
                name = node[1:]
                if name not in scope:
                    raise PDDLError(file, f"undeclared parameter {node}", line)
                return lambda s, e: e[name]
            if is_number(node):
                value = float(node)
                return lambda s, e: value
            obj = self.objects.get(node.lower())
            if obj is None:
                raise PDDLError(file, f"undeclared object or constant {node}", line)
            return lambda s, e: obj
        if not node:
            return lambda s, e: True
        head = _word(node[0])
        args = node[1:]
        if head in ("and", "or"):
            parts = [self._condition(a, scope, file, line) for a in args]
            combine = all if head == "and" else any
            return lambda s, e: combine(p(s, e) for p in parts)
        if head == "not":
            inner = self._condition(_single(node, file, line), scope, file, line)
            return lambda s, e: not inner(s, e)
        if head == "imply":
            if len(args) != 2:
                raise PDDLError(file, "imply takes two conditions", line)
            left, right = (self._condition(a, scope, file, line) for a in args)
            return lambda s, e: (not left(s, e)) or right(s, e)
        if head in ("exists", "forall"):
            variables, body = self._quantified(node, scope, file, line)
            inner = self._condition(body, {**scope, **dict(variables)}, file, line)
            combine = any if head == "exists" else all

            def quantified(s, e):
                names = [n for n, _ in variables]
                choices = itertools.product(*(self.objects_of(t) for _, t in variables))
                return combine(inner(s, {**e, **dict(zip(names, c, strict=True))}) for c in choices)

            return quantified
        if head == "=" and len(args) == 2:
            left, right = (self._condition(a, scope, file, line) for a in args)
            return lambda s, e: left(s, e) == right(s, e)
        if head in _COMPARE and len(args) == 2:
            compare = _COMPARE[head]
            left, right = (self._condition(a, scope, file, line) for a in args)
            return lambda s, e: compare(left(s, e), right(s, e))
        if head in _ARITHMETIC and args:
            operation = _ARITHMETIC[head]
            parts = [self._condition(a, scope, file, line) for a in args]
            if head == "-" and len(parts) == 1:
                only = parts[0]
                return lambda s, e: -only(s, e)  # type: ignore[operator]  # a number

            def fold(s, e):
                values = [p(s, e) for p in parts]
                result = values[0]
                for value in values[1:]:
                    result = operation(result, value)
                return result

            return fold
        if head.lower() in self._functions:
            key = self._atom_key(node, scope, file, line, numeric=True)

            def number(s, e):
                value = s.numbers.get(key(e))
                if value is None:
                    raise _Undefined(to_text(node))
                return value

            return number
        key = self._atom_key(node, scope, file, line, numeric=False)
        return lambda s, e: key(e) in s.atoms

    def _atom_key(self, node: SExpr, scope: dict[str, str], file: str, line: int | None, numeric: bool) -> Callable[[Env], Atom]:
        """A function of the environment giving the atom (or numeric fluent) `node` names."""
        if not isinstance(node, SList) or not node or not isinstance(node[0], str):
            raise PDDLError(file, f"expected a {'function' if numeric else 'predicate'} term, found {_show(node)}", line)
        line = node.line or line
        table, declared = (self._functions, self.task.functions) if numeric else (self._predicates, self.task.predicates)
        name = table.get(node[0].lower())
        if name is None:
            raise PDDLError(file, f"undeclared {'function' if numeric else 'predicate'} {node[0]}", line)
        if len(node) - 1 != len(declared[name]):
            raise PDDLError(file, f"{name} takes {len(declared[name])} argument(s), given {len(node) - 1} in {_show(node)}", line)
        parts = []
        for arg in node[1:]:
            if not isinstance(arg, str):
                raise PDDLError(file, f"arguments must be objects or parameters, found {_show(arg)}", line)
            if arg.startswith("?"):
                if arg[1:] not in scope:
                    raise PDDLError(file, f"undeclared parameter {arg}", getattr(arg, "line", 0) or line)
                parts.append((True, arg[1:]))
            else:
                obj = self.objects.get(arg.lower())
                if obj is None:
                    raise PDDLError(file, f"undeclared object or constant {arg}", getattr(arg, "line", 0) or line)
                parts.append((False, obj))
        if not parts:
            atom = (name,)
            return lambda e: atom
        return lambda e: (name, *[e[v] if bound else v for bound, v in parts])

    def _effects(self, node, scope, condition, condition_node, forall, out, file, line) -> None:
        line = getattr(node, "line", 0) or line
        if not isinstance(node, SList) or not node:
            raise PDDLError(file, f"expected an effect, found {_show(node)}", line)
        head = _word(node[0])
        if head == "and":
            for part in node[1:]:
                self._effects(part, scope, condition, condition_node, forall, out, file, line)
        elif head == "when":
            if len(node) != 3:
                raise PDDLError(file, "when takes a condition and an effect", line)
            if condition is not None:
                raise PDDLError(file, "nested when effects are not supported", line)
            test = self._condition(node[1], scope, file, line)
            self._effects(node[2], scope, test, node[1], forall, out, file, line)
        elif head == "forall":
            variables, body = self._quantified(node, scope, file, line)
            self._effects(body, {**scope, **dict(variables)}, condition, condition_node, forall + tuple(variables), out, file, line)
        elif head == "not":
            target = _single(node, file, line)
            out.append(
                Effect(self._atom_key(target, scope, file, line, numeric=False), "delete", None, condition, condition_node, forall, False)
            )
        elif head in _UPDATES:
            if len(node) != 3:
                raise PDDLError(file, f"{head} takes a function term and a value", line)
            key = self._atom_key(node[1], scope, file, line, numeric=True)
            value = self._condition(node[2], scope, file, line)
            is_danger = isinstance(node[1], SList) and _word(node[1][0]) == DANGER
            out.append(Effect(key, head, value, condition, condition_node, forall, is_danger))
        else:
            out.append(
                Effect(self._atom_key(node, scope, file, line, numeric=False), "add", None, condition, condition_node, forall, False)
            )

    def _quantified(self, node: SList, scope, file, line) -> tuple[list[tuple[str, str]], SExpr]:
        if len(node) != 3 or not isinstance(node[1], SList):
            raise PDDLError(file, f"{node[0]} takes (variables) and a body", line)
        variables = [(name.lstrip("?"), t.lower()) for names, t in typed(node[1], file, line or 0) for name in names]
        return variables, node[2]

    def _number(self, node: SExpr, file: str, line: int | None) -> float:
        if isinstance(node, str) and is_number(node):
            return float(node)
        raise PDDLError(file, f"expected a number, found {_show(node)}", line)

    # -- grounding ---------------------------------------------------------------------------
    def ground(self, name: str, args: tuple[str, ...]) -> GroundAction | str:
        """The ground action for `(name args...)`, or why there is none (a message)."""
        cache_key = (name, args)
        found = self._ground_cache.get(cache_key)
        if found is None:
            found = self._ground(name, args)
            self._ground_cache[cache_key] = found
        return found

    def ground_actions(self, limit: int) -> list[GroundAction] | None:
        """Every ground action of the task, or None when there are more than `limit` (counted
        before any is built, from the parameters' object counts)."""
        domains = {key: [self.objects_of(t) for _, t in action.parameters] for key, action in self.actions.items()}
        if sum(math.prod(len(d) for d in parameters) for parameters in domains.values()) > limit:
            return None
        every = (
            self.ground(self.actions[key].name, args) for key, parameters in domains.items() for args in itertools.product(*parameters)
        )
        return [g for g in every if isinstance(g, GroundAction)]

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
            listed = " ".join("?" + p for p, _ in params) or "none"
            return f"{action.name} takes {len(params)} argument(s) ({listed}), got {len(args)}"
        env = {}
        for (param, type_name), arg in zip(params, args, strict=True):
            obj = self.objects.get(arg.lower())
            if obj is None:
                return f"unknown object '{arg}'"
            members = self._type_members.get(type_name)
            if members is None:
                members = self._type_members[type_name] = frozenset(self.objects_of(type_name))
            if obj not in members:
                return f"'{obj}' is not of type {type_name} (parameter ?{param} of {action.name})"
            env[param] = obj
        preconditions, effects = self._compiled[action.name.lower()]
        bound = [(effect, None if effect.forall else effect.key(env)) for effect in effects]
        fixed = None
        if all(e.kind in ("add", "delete") and e.condition is None and not e.forall for e in effects):
            fixed = Delta([k for e, k in bound if e.kind == "add"], [k for e, k in bound if e.kind == "delete"], {}, [])
        return GroundAction(
            action.name,
            env,
            [(test, node, None if key is None else key(env), positive) for test, node, key, positive in preconditions],
            bound,
            fixed,
        )

    # -- execution ---------------------------------------------------------------------------
    def unmet_precondition(self, ground: GroundAction, state: State) -> SExpr | None:
        atoms = state.atoms
        for test, node, atom, positive in ground.preconditions:
            if atom is not None:
                if (atom in atoms) is not positive:
                    return node
                continue
            try:
                if not test(state, ground.env):
                    return node
            except _Undefined:
                return node
        return None

    def effects(self, ground: GroundAction, state: State) -> Delta:
        """What `ground` changes when its effects are read in `state` (not to be mutated)."""
        if ground.fixed is not None:
            return ground.fixed
        delta = Delta([], [], {}, [])
        for effect, bound in ground.effects:
            bindings = [(ground.env, bound)]
            if effect.forall:
                names = [n for n, _ in effect.forall]
                choices = itertools.product(*(self.objects_of(t) for _, t in effect.forall))
                envs = [{**ground.env, **dict(zip(names, c, strict=True))} for c in choices]
                bindings = [(env, effect.key(env)) for env in envs]
            for env, key in bindings:
                try:
                    if effect.condition is not None and not effect.condition(state, env):
                        continue
                    if effect.kind == "add":
                        delta.adds.append(key)
                        continue
                    if effect.kind == "delete":
                        delta.deletes.append(key)
                        continue
                    assert effect.value is not None
                    value = effect.value(state, env)
                    if effect.kind != "assign":
                        current = state.numbers.get(key)
                        if current is None:
                            raise _Undefined(str(key))
                        value = _update(effect.kind, current, value)
                except _Undefined:
                    continue
                if effect.is_danger:
                    delta.danger_fired.append(effect.condition_node)
                delta.numbers[key] = value
        return delta

    def unmet_goals(self, state: State) -> list[SExpr]:
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
        for _, _, atom, positive in ground.preconditions:
            if atom is not None:
                (forced.atoms.add if positive else forced.atoms.discard)(atom)
        return forced

    @staticmethod
    def render(node: SExpr | None, env: Env | None = None) -> str:
        """A condition as PDDL text, its parameters bound from `env`."""
        if node is None:
            return "(always)"
        env = env or {}
        if isinstance(node, str):
            return env.get(node[1:], node) if node.startswith("?") else node
        return "(" + " ".join(Simulator.render(part, env) for part in node) + ")"


def _update(kind: str, current: float, value: float) -> float:
    if kind == "increase":
        return current + value
    if kind == "decrease":
        return current - value
    if kind == "scale-up":
        return current * value
    return current / value


def _conjuncts(node: SExpr) -> list[SExpr]:
    if isinstance(node, SList) and node and _word(node[0]) == "and":
        return [c for part in node[1:] for c in _conjuncts(part)]
    return [node]


def _single(node: SList, file: str, line: int | None) -> SExpr:
    if len(node) != 2:
        raise PDDLError(file, f"{node[0]} takes one argument, found {_show(node)}", line)
    return node[1]


def _word(token: SExpr) -> str:
    return token.lower() if isinstance(token, str) else ""


def _show(expr: SExpr) -> str:
    text = to_text(expr)
    return text if len(text) <= 60 else text[:57] + "..."
