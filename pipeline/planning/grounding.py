"""The task compiled for search: ground actions pruned by static facts, states as bit sets.

A predicate or function no action changes is static: its atoms are what `:init` says, forever.
Grounding binds an action's parameters one at a time and drops a binding as soon as a precondition
conjunct over static facts alone (a connection, a type-like property, an equality) fails, so a
task of hundreds of objects grounds to the actions that can ever apply, not to every combination
of typed arguments. Static conjuncts are then dropped from the ground action; literals over
changing atoms become bit masks over the changing atoms that occur, and a state is one integer
(plus the numbers, where numbers other than danger remain). What is not a literal (numeric
conditions, quantifiers, disjunctions, conditional effects other than danger, numeric effects) is
evaluated by the validator's own simulator on a view of the state, so the semantics are the
validator's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from safeforge.pddl.reader import DANGER
from safeforge.pddl.sexpr import SExpr, SList
from safeforge.validation.simulator import Effect, GroundAction, Simulator, State

_UPDATES = {"assign", "increase", "decrease", "scale-up", "scale-down"}


class GroundingLimit(Exception):
    """Grounding went beyond its action or time budget."""


class BitAtoms:
    """The atoms of a search state, as the simulator's tests read them (`atom in atoms`)."""

    __slots__ = ("bits", "index", "static")

    def __init__(self, bits: int, index: dict, static: frozenset):
        self.bits, self.index, self.static = bits, index, static

    def __contains__(self, atom: object) -> bool:
        position = self.index.get(atom)
        if position is None:
            return atom in self.static
        return bool(self.bits >> position & 1)


@dataclass(slots=True)
class SearchAction:
    """A ground action over bit masks; `slow` parts go through the simulator."""

    text: str
    args: tuple[str, ...]
    env: dict  # parameter -> object, for the tests
    pre: int  # atoms that must hold
    pre_not: int  # atoms that must not hold
    add: int
    delete: int
    tests: list  # compiled precondition conjuncts the masks do not cover
    state_tests: list  # those of them that read no parameter: the schema's one list, which the search asks once per state
    dangers: list  # [(must hold, must not hold, test or None)]: one per danger effect that can fire
    slow: GroundAction | None  # the effects the masks do not cover (numeric, conditional, forall)
    members: tuple[str, ...] | None = None  # its arguments that are interchangeable objects (`symmetry`), once asked


class GroundTask:
    """What a search needs of one task. Actions are grounded lazily: an action schema with a
    precondition literal over changing atoms (its trigger) is grounded for a trigger atom the first
    time a state where that atom holds is expanded; the others are grounded at once."""

    def __init__(self, sim: Simulator, max_actions: int, deadline: float):
        self.sim, self.max_actions, self.deadline = sim, max_actions, deadline
        self.changing = _changed_names(sim)  # predicates and functions (lower case) some action changes
        initial = sim.initial
        self.static = frozenset(a for a in initial.atoms if a[0].lower() not in self.changing)  # static atoms that hold
        self.index: dict = {}  # changing atom -> bit
        self.atoms: list = []  # bit -> changing atom
        self.numbers = dict(initial.numbers)  # initial numbers (danger included, never changed by search)
        self.numeric = any(name.lower() in self.changing for name in sim.task.functions if name.lower() != DANGER)
        self.initial = self.bits_of(initial)
        self.goal = self.goal_not = 0
        self.goal_tests: list = []
        for test, node in sim.goals:
            masks = _literal_masks(self, node)
            if masks is None:
                self.goal_tests.append(test)
            elif masks is False:
                self.goal_tests.append(lambda s, e: False)  # a static goal that does not hold
            elif masks is not True:
                self.goal |= masks[0]
                self.goal_not |= masks[1]
        self.grounded = 0
        self.untriggered: list[SearchAction] = []  # actions of schemas without a trigger
        twins = sim.twins()  # they reach the states their first reaches, in as many steps
        self._schemas = [
            _Schema(self, action.name, action.parameters, *sim.schema(key)) for key, action in sim.actions.items() if key not in twins
        ]
        self.arity = max((len(schema.names) for schema in self._schemas), default=0)  # the most parameters of an action
        self._by_trigger: dict[str, list[_Schema]] = {}
        for schema in self._schemas:
            if schema.trigger is None:
                self.untriggered += self._built(schema, {})
            else:
                self._by_trigger.setdefault(schema.trigger[0], []).append(schema)
        self._triggered: dict[int, list[SearchAction]] = {}  # bit -> actions whose trigger is that atom

    def bits_of(self, state: State) -> int:
        """The changing atoms of `state` (a state reached from the initial one: its static atoms are the initial's).
        New atoms get their bits in sorted order, so that a search's order (and which of equally
        short plans it finds) never depends on the order of a set (which changes with the process)."""
        bits = 0
        for atom in sorted(atom for atom in state.atoms if atom[0].lower() in self.changing):
            bits |= self.bit(atom)
        return bits

    def view(self, bits: int, numbers: dict) -> State:
        return State(BitAtoms(bits, self.index, self.static), numbers)  # type: ignore[arg-type]  # a read-only view

    def candidates(self, bits: int, skipped: int = 0) -> Iterator[SearchAction]:
        """Actions whose trigger holds in `bits` (their other conditions are still to be tested),
        but for those triggered by an atom of `skipped` (not grounded until a state needs them);
        GroundingLimit past the action or time budget."""
        yield from self.untriggered
        rest = bits & ~skipped
        while rest:
            low = rest & -rest
            rest ^= low
            position = low.bit_length() - 1
            found = self._triggered.get(position)
            if found is None:
                found = self._triggered[position] = self._ground_for(self.atoms[position])
            yield from found

    def every_action(self) -> list[SearchAction]:
        """Every ground action (grounding what is still lazy: for tests and benchmarks)."""
        found = list(self.untriggered)
        for schema in self._schemas:
            if schema.trigger is not None:
                found += self._built(schema, {})
        return found

    def _ground_for(self, atom: tuple) -> list[SearchAction]:
        found: list[SearchAction] = []
        for schema in self._by_trigger.get(atom[0], []):
            bound = schema.unify(atom)
            if bound is not None:
                found += self._built(schema, bound)
        return found

    def _built(self, schema: _Schema, bound: dict) -> list[SearchAction]:
        found = []
        for env in schema.bindings(self.deadline, bound):
            action = schema.build(env)
            if action is not None:
                found.append(action)
        self.grounded += len(found)
        if self.grounded > self.max_actions:
            raise GroundingLimit(f"more than {self.max_actions:,} ground actions")
        return found

    def bit(self, atom: tuple) -> int:
        position = self.index.get(atom)
        if position is None:
            position = self.index[atom] = len(self.atoms)
            self.atoms.append(atom)
        return 1 << position


def ground_task(sim: Simulator, max_actions: int, deadline: float) -> GroundTask:
    """The task compiled for search; GroundingLimit (now or while searching) past `max_actions`
    ground actions or `deadline` (a `time.monotonic()` value)."""
    return GroundTask(sim, max_actions, deadline)


class _Schema:
    """One action schema prepared for grounding: its static conjuncts sorted by the parameter that
    completes them (a positive static literal also proposes that parameter's values, from an index
    of the static atoms), its other literals and its effects as atom keys to bind. Its trigger is
    the positive literal over changing atoms that binds the most parameters (the first of those):
    an atom of it that holds leaves the fewest bindings to try (an item's place, not every item
    beside the robot)."""

    def __init__(self, task: GroundTask, name: str, parameters, preconditions, effects):
        self.task, self.name = task, name
        self.names = [p for p, _ in parameters]
        self.domains = [task.sim.objects_of(t) for _, t in parameters]
        self.typed = [set(d) for d in self.domains]
        self.checks: list[list] = [[] for _ in self.names] or [[]]  # static tests, by the parameter that completes them
        self.proposers: list = [None for _ in self.names]  # (predicate, [(position, parameter or object)], position)
        self.literals: list = []  # (key, positive) over changing atoms
        self.tests: list = []  # changing conditions that are not literals, over parameters
        self.state_tests: list = []  # the same over no parameter: one answer per state for every binding
        self.trigger: tuple[str, list[str]] | None = None  # (predicate, arguments): see the class docstring
        triggers: list[SExpr] = []
        initial, static, changing = task.sim.initial, task.static, task.changing
        for test, node, key, positive in preconditions:
            depth = max((self.names.index(n) for n in _parameters(node) & set(self.names)), default=0)
            if _names(node) & changing:
                if key is not None:
                    self.literals.append((key, positive))
                    if positive:
                        triggers.append(node)
                elif _parameters(node) & set(self.names):
                    self.tests.append(test)
                else:
                    self.state_tests.append(test)
            elif key is not None:
                self.checks[depth].append(lambda env, key=key, positive=positive: (key(env) in static) is positive)
                if positive and self.names and self.proposers[depth] is None:
                    self.proposers[depth] = _proposer(task, node, self.names, depth)
            else:
                self.checks[depth].append(lambda env, test=test: Simulator.holds(test, initial, env))
        if triggers:
            node = max(triggers, key=lambda n: len(_parameters(n)))  # the first binding the most parameters
            self.trigger = (task.sim.predicate_name(node[0]), [str(a) for a in node[1:]])
        self.effects = effects
        self.dangers: list[
            tuple[Effect, list[tuple[Callable, bool]] | None]
        ] = []  # (effect, its condition's literals; None: not a conjunction of literals)
        for effect in effects:
            if effect.is_danger and not effect.forall:
                conjuncts = [] if effect.condition is None else _conjuncts(effect.condition_node)
                literals = [task.sim.literal(c, dict(parameters)) for c in conjuncts]
                keys = [(key, positive) for key, positive in literals if key is not None]
                self.dangers.append((effect, keys if len(keys) == len(literals) else None))
        self._indexes: dict = {}

    def unify(self, atom: tuple) -> dict | None:
        """The parameters the trigger binds when it is `atom` (None: it cannot be)."""
        assert self.trigger is not None
        bound: dict = {}
        for template, value in zip(self.trigger[1], atom[1:], strict=True):
            if template.startswith("?"):
                name = template[1:]
                if bound.setdefault(name, value) != value or value not in self.typed[self.names.index(name)]:
                    return None
            elif self.task.sim.objects.get(template.lower(), template) != value:
                return None
        return bound

    def bindings(self, deadline: float, bound: dict) -> Iterator[dict]:
        """Every binding of the parameters (extending `bound`) under which the static conjuncts hold."""
        if not self.names:
            if all(check({}) for check in self.checks[0]):
                yield {}
            return
        env: dict = {}
        count = 0

        def bind(depth: int) -> Iterator[dict]:
            nonlocal count
            name, checks = self.names[depth], self.checks[depth]
            for value in self._values(depth, env, bound):
                env[name] = value
                count += 1
                if count % 4096 == 0 and time.monotonic() > deadline:
                    raise GroundingLimit("the time budget ran out while grounding")
                if all(check(env) for check in checks):
                    if depth + 1 == len(self.names):
                        yield dict(env)
                    else:
                        yield from bind(depth + 1)
            env.pop(name, None)

        yield from bind(0)

    def _values(self, depth: int, env: dict, bound: dict) -> list[str]:
        if self.names[depth] in bound:
            return [bound[self.names[depth]]]
        proposer = self.proposers[depth]
        if proposer is None:
            return self.domains[depth]
        predicate, bound, position = proposer
        index = self._indexes.get(depth)
        if index is None:
            index = self._indexes[depth] = {}
            for atom in self.task.static:
                if atom[0] == predicate:
                    index.setdefault(tuple(atom[i] for i, _ in bound), []).append(atom[position])
            for values in index.values():
                values.sort()  # not the static set's order, which changes with the process
        found = index.get(tuple(env[arg[1:]] if arg.startswith("?") else arg for _, arg in bound), [])
        return [v for v in found if v in self.typed[depth]]

    def build(self, env: dict) -> SearchAction | None:
        task = self.task
        pre = pre_not = add = delete = 0
        for key, positive in self.literals:
            if positive:
                pre |= task.bit(key(env))
            else:
                pre_not |= task.bit(key(env))
        if pre & pre_not:
            return None
        dangers: list = []
        for effect, literals in self.dangers:
            if literals is None:
                dangers.append((0, 0, effect.condition))
                continue
            must = must_not = 0
            possible = True
            for key, positive in literals:
                atom = key(env)
                if atom[0].lower() in task.changing:
                    if positive:
                        must |= task.bit(atom)
                    else:
                        must_not |= task.bit(atom)
                elif (atom in task.static) is not positive:
                    possible = False  # a static part of the condition is false: it never fires
            if possible and not must & must_not:
                dangers.append((must, must_not, None))
        slow = []
        for effect in self.effects:
            if effect.is_danger and not effect.forall:
                continue
            if effect.kind in ("add", "delete") and effect.condition is None and not effect.forall:
                if effect.kind == "add":
                    add |= task.bit(effect.key(env))
                else:
                    delete |= task.bit(effect.key(env))
            else:
                slow.append((effect, None if effect.forall else effect.key(env)))
        args = tuple(env.values())
        text = "(" + " ".join((self.name, *args)) + ")"
        ground = GroundAction(self.name, env, [], slow) if slow else None
        return SearchAction(text, args, env, pre, pre_not, add, delete & ~add, self.tests, self.state_tests, dangers, ground)


def _proposer(task: GroundTask, node: SExpr, names: list[str], depth: int):
    """How a positive static literal proposes the values of parameter `depth` (None when it cannot)."""
    if not isinstance(node, SList) or not node or not isinstance(node[0], str):
        return None
    args = [str(a) for a in node[1:]]
    target = "?" + names[depth]
    if args.count(target) != 1 or any(a.startswith("?") and a[1:] not in names[:depth] for a in args if a != target):
        return None
    predicate = task.sim.predicate_name(node[0])
    bound = [
        (position, arg if arg.startswith("?") else task.sim.objects.get(arg.lower(), arg))
        for position, arg in enumerate(args, start=1)
        if arg != target
    ]
    return predicate, bound, args.index(target) + 1


def _literal_masks(task: GroundTask, node: SExpr) -> tuple[int, int] | bool | None:
    """For a goal conjunct: (must hold, must not hold) when it is a literal over changing atoms;
    True or False for a literal over static atoms (decided now); None when it is not a literal."""
    key, positive = task.sim.literal(node, {})
    if key is None:
        return None
    atom = key({})
    if atom[0].lower() not in task.changing:
        return (atom in task.static) is positive
    bit = task.bit(atom)
    return (bit, 0) if positive else (0, bit)


def _conjuncts(node: SExpr) -> list[SExpr]:
    if isinstance(node, SList) and node and isinstance(node[0], str) and node[0].lower() == "and":
        return [c for part in node[1:] for c in _conjuncts(part)]
    return [node]


def _names(node: SExpr) -> set[str]:
    """Lower-case heads of every sub-expression (predicates, functions and connectives)."""
    found: set[str] = set()
    if isinstance(node, SList) and node:
        if isinstance(node[0], str):
            found.add(node[0].lower())
        for part in node[1:]:
            found |= _names(part)
    return found


def _parameters(node: SExpr) -> set[str]:
    if isinstance(node, str):
        return {node[1:]} if node.startswith("?") else set()
    found: set[str] = set()
    for part in node:
        found |= _parameters(part)
    return found


def _changed_names(sim: Simulator) -> set[str]:
    """Predicates and functions (lower case) some action's effect changes."""
    changed: set[str] = set()

    def visit(node: SExpr) -> None:
        if not isinstance(node, SList) or not node or not isinstance(node[0], str):
            return
        head = node[0].lower()
        if head in ("and", "not"):
            for part in node[1:]:
                visit(part)
        elif head in ("when", "forall"):
            for part in node[2:]:
                visit(part)
        elif head in _UPDATES:
            if isinstance(node[1], SList) and node[1] and isinstance(node[1][0], str):
                changed.add(node[1][0].lower())
        else:
            changed.add(head)

    for action in sim.actions.values():
        if action.effect is not None:
            visit(action.effect)
    return changed
