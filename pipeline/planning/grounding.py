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
    task = GroundTask(sim, [], {}, [], static, 0, dict(initial.numbers), False, 0, 0, [])
    task.numeric = any(name.lower() in changing for name in sim.task.functions if name.lower() != DANGER)
    for atom in initial.atoms:
        if atom[0].lower() in changing:
            task.initial |= task.bit(atom)
    for test, node in sim.goals:
        masks = _literal_masks(task, changing, node, {}, {})
        if masks is None:
            task.goal_tests.append(test)
        elif masks is False:
            task.goal_tests.append(lambda s, e: False)  # a static goal that does not hold
        elif masks is not True:
            task.goal |= masks[0]
            task.goal_not |= masks[1]
    for key, action in sim.actions.items():
        preconditions, effects = sim.schema(key)
        scope = dict(action.parameters)
        names = [name for name, _ in action.parameters]
        domains = [sim.objects_of(type_name) for _, type_name in action.parameters]
        checks: list[list] = [[] for _ in names] or [[]]  # static conjuncts, by the last parameter they need
        dynamic = []
        for test, node, _, _ in preconditions:
            used = _parameters(node) & set(names)
            if _names(node) & changing:
                dynamic.append((test, node))
            else:
                checks[max((names.index(n) for n in used), default=0)].append(test)
        for env in _bindings(names, domains, checks, initial, deadline):
            built = _search_action(task, changing, action.name, env, dynamic, effects, scope)
            if built is not None:
                task.actions.append(built)
                if len(task.actions) > max_actions:
                    raise GroundingLimit(f"more than {max_actions:,} ground actions")
    task.__post_init__()
    return task


def _bindings(names, domains, checks, initial: State, deadline: float) -> Iterator[dict]:
    """Every binding of the parameters under which the static conjuncts hold (checked as soon as
    the parameters they need are bound)."""
    if not names:
        if all(Simulator.holds(t, initial, {}) for t in checks[0]):
            yield {}
        return
    env: dict = {}
    count = 0

    def bind(depth: int) -> Iterator[dict]:
        nonlocal count
        name = names[depth]
        for value in domains[depth]:
            env[name] = value
            count += 1
            if count % 4096 == 0 and time.monotonic() > deadline:
                raise GroundingLimit("the time budget ran out while grounding")
            if all(Simulator.holds(t, initial, env) for t in checks[depth]):
                if depth + 1 == len(names):
                    yield dict(env)
                else:
                    yield from bind(depth + 1)
        env.pop(name, None)

    yield from bind(0)


def _search_action(task: GroundTask, changing: set[str], name: str, env: dict, dynamic, effects, scope) -> SearchAction | None:
    pre = pre_not = add = delete = 0
    tests: list = []
    for test, node in dynamic:
        masks = _literal_masks(task, changing, node, env, scope)
        if masks is False:
            return None  # a literal over atoms that never change, false
        if masks is None:
            tests.append(test)
        else:
            pre |= masks[0]
            pre_not |= masks[1]
    if pre & pre_not:
        return None
    dangers: list = []
    slow = []
    for effect in effects:
        if effect.is_danger and not effect.forall:
            if effect.condition is None:
                dangers.append((0, 0, None))
                continue
            masks = _condition_masks(task, changing, effect.condition_node, env, scope)
            if masks is False:
                continue  # it can never fire
            dangers.append((masks[0], masks[1], None) if masks is not None else (0, 0, effect.condition))
        elif effect.kind in ("add", "delete") and effect.condition is None and not effect.forall:
            if effect.kind == "add":
                add |= task.bit(effect.key(env))
            else:
                delete |= task.bit(effect.key(env))
        else:
            slow.append((effect, None if effect.forall else effect.key(env)))
    delete &= ~add  # deletes apply before adds
    args = tuple(env.values())
    text = "(" + " ".join((name, *args)) + ")"
    ground = GroundAction(name, env, [], slow) if slow else None
    return SearchAction(text, args, env, pre, pre_not, add, delete, tests, dangers, ground)


def _literal_masks(task: GroundTask, changing: set[str], node: SExpr, env: dict, scope) -> tuple[int, int] | bool | None:
    """(must hold, must not hold) for a literal over changing atoms; True or False for a literal
    over static atoms (already decided); None when `node` is not a literal."""
    key, positive = task.sim.literal(node, scope)
    if key is None:
        return None
    atom = key(env)
    if atom[0].lower() not in changing:
        return True if (atom in task.static) is positive else False
    bit = task.bit(atom)
    return (bit, 0) if positive else (0, bit)


def _condition_masks(task: GroundTask, changing: set[str], node: SExpr, env: dict, scope) -> tuple[int, int] | bool | None:
    """Masks for a conjunction of literals (False: it can never hold; None: not a conjunction of literals)."""
    must = must_not = 0
    for conjunct in _conjuncts(node):
        masks = _literal_masks(task, changing, conjunct, env, scope)
        if masks is None:
            return None
        if masks is False:
            return False
        if masks is not True:
            must |= masks[0]
            must_not |= masks[1]
    return False if must & must_not else (must, must_not)


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

