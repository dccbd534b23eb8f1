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
from collections.abc import Iterator
from dataclasses import dataclass, field

from safeforge.pddl.reader import DANGER
from safeforge.pddl.sexpr import SExpr, SList
from safeforge.validation.simulator import GroundAction, Simulator, State

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
    dangers: list  # [(must hold, must not hold, test or None)]: one per danger effect that can fire
    slow: GroundAction | None  # the effects the masks do not cover (numeric, conditional, forall)


@dataclass
class GroundTask:
    """What a search needs of one task."""

    sim: Simulator
    actions: list[SearchAction]
    index: dict  # changing atom -> bit
    atoms: list  # bit -> changing atom
    static: frozenset  # static atoms that hold
    initial: int
    numbers: dict  # initial numbers (danger included, never changed by search)
    numeric: bool  # numbers other than danger can change
    goal: int
    goal_not: int
    goal_tests: list
    changing: set[str] = field(default_factory=set)  # predicates and functions (lower case) some action changes
    triggers: dict[int, list[SearchAction]] = field(default_factory=dict)  # bit -> actions needing it
    untriggered: list[SearchAction] = field(default_factory=list)  # actions needing no atom

    def __post_init__(self) -> None:
        for action in self.actions:
            if action.pre:
                low = action.pre & -action.pre
                self.triggers.setdefault(low.bit_length() - 1, []).append(action)
            else:
                self.untriggered.append(action)

    def view(self, bits: int, numbers: dict) -> State:
        return State(BitAtoms(bits, self.index, self.static), numbers)  # type: ignore[arg-type]  # a read-only view

    def candidates(self, bits: int) -> Iterator[SearchAction]:
        """Actions whose first required atom holds in `bits` (then the others must be tested)."""
        yield from self.untriggered
        rest = bits
        while rest:
            low = rest & -rest
            found = self.triggers.get(low.bit_length() - 1)
            if found:
                yield from found
            rest ^= low

    def bit(self, atom: tuple) -> int:
        position = self.index.get(atom)
        if position is None:
            position = self.index[atom] = len(self.atoms)
            self.atoms.append(atom)
        return 1 << position


def ground_task(sim: Simulator, max_actions: int, deadline: float) -> GroundTask:
    """The task compiled for search; GroundingLimit past `max_actions` ground actions or `deadline`
    (a `time.monotonic()` value)."""
    changing = _changed_names(sim)
    initial = sim.initial
    static = frozenset(a for a in initial.atoms if a[0].lower() not in changing)
    task = GroundTask(sim, [], {}, [], static, 0, dict(initial.numbers), False, 0, 0, [], changing)
    task.numeric = any(name.lower() in changing for name in sim.task.functions if name.lower() != DANGER)
    for atom in initial.atoms:
        if atom[0].lower() in changing:
            task.initial |= task.bit(atom)
    for test, node in sim.goals:
        masks = _literal_masks(task, node)
        if masks is None:
            task.goal_tests.append(test)
        elif masks is False:
            task.goal_tests.append(lambda s, e: False)  # a static goal that does not hold
        elif masks is not True:
            task.goal |= masks[0]
            task.goal_not |= masks[1]
    for key, action in sim.actions.items():
        schema = _Schema(task, action.name, action.parameters, *sim.schema(key))
        for env in schema.bindings(deadline):
            built = schema.build(env)
            if built is not None:
                task.actions.append(built)
                if len(task.actions) > max_actions:
                    raise GroundingLimit(f"more than {max_actions:,} ground actions")
    task.__post_init__()
    return task


class _Schema:
    """One action schema prepared for grounding: its static conjuncts sorted by the parameter that
    completes them (a positive static literal also proposes that parameter's values, from an index
    of the static atoms), its other literals and its effects as atom keys to bind."""

    def __init__(self, task: GroundTask, name: str, parameters, preconditions, effects):
        self.task, self.name = task, name
        self.names = [p for p, _ in parameters]
        self.domains = [task.sim.objects_of(t) for _, t in parameters]
        self.typed = [set(d) for d in self.domains]
        self.checks: list[list] = [[] for _ in self.names] or [[]]  # static tests, by the parameter that completes them
        self.proposers: list = [None for _ in self.names]  # (predicate, [(position, parameter or object)], position)
        self.literals: list = []  # (key, positive) over changing atoms
        self.tests: list = []  # changing conditions that are not literals
        initial, static, changing = task.sim.initial, task.static, task.changing
        for test, node, key, positive in preconditions:
            depth = max((self.names.index(n) for n in _parameters(node) & set(self.names)), default=0)
            if _names(node) & changing:
                if key is not None:
                    self.literals.append((key, positive))
                else:
                    self.tests.append(test)
            elif key is not None:
                self.checks[depth].append(lambda env, key=key, positive=positive: (key(env) in static) is positive)
                if positive and self.names and self.proposers[depth] is None:
                    self.proposers[depth] = _proposer(task, node, self.names, depth)
            else:
                self.checks[depth].append(lambda env, test=test: Simulator.holds(test, initial, env))
        self.effects = effects
        self.dangers = []  # (effect, [(key, positive)] of its condition's literals, or None when it is not a conjunction of literals)
        for effect in effects:
            if effect.is_danger and not effect.forall:
                conjuncts = [] if effect.condition is None else _conjuncts(effect.condition_node)
                literals = [task.sim.literal(c, dict(parameters)) for c in conjuncts]
                self.dangers.append((effect, literals if all(k is not None for k, _ in literals) else None))
        self._indexes: dict = {}

    def bindings(self, deadline: float) -> Iterator[dict]:
        """Every binding of the parameters under which the static conjuncts hold."""
        if not self.names:
            if all(check({}) for check in self.checks[0]):
                yield {}
            return
        env: dict = {}
        count = 0

        def bind(depth: int) -> Iterator[dict]:
            nonlocal count
            name, checks = self.names[depth], self.checks[depth]
            for value in self._values(depth, env):
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

    def _values(self, depth: int, env: dict) -> list[str]:
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
        return SearchAction(text, args, env, pre, pre_not, add, delete & ~add, self.tests, dangers, ground)


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
