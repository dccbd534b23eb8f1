"""Shortest reference plans found in this process: a breadth-first search over the task compiled
for search (`safeforge.planning.grounding`).

One search over (state, danger raised yet) pairs finds both reference plans, each of the fewest
steps: the safe plan reaches the goal without any danger effect firing, the unsafe plan reaches it
after at least one has fired. Numbers other than danger are part of the state, so numeric tasks
get shortest plans too. Successors that differ only by interchangeable objects are expanded once
(`safeforge.planning.symmetry`), and a state seen before with as much of each resource (a battery:
`safeforge.planning.resources`) is not expanded again. A budget of nodes and time, and a stop request (the planners
answered first), bound it; a mode it has not settled then is left to the planners
(`safeforge.planning.solve`). A mode whose whole reachable space was searched without reaching the
goal is proven to have no plan.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from safeforge.planning.grounding import GroundingLimit, GroundTask, ground_task
from safeforge.planning.resources import resources
from safeforge.planning.solve import SolveResult
from safeforge.planning.symmetry import Symmetry
from safeforge.validation.simulator import Simulator, State

ENGINE = "search"
NODE_BUDGET = 500_000  # states kept; a few hundred bytes each
TIME_BUDGET_S = 60.0
MAX_GROUND_ACTIONS = 200_000
_CHECK_EVERY = 64  # expansions between looks at the clock and the stop request


def shortest_plans(
    sim: Simulator,
    node_budget: int = NODE_BUDGET,
    time_budget: float = TIME_BUDGET_S,
    stop: threading.Event | None = None,
    on_settled: Callable[[str], None] | None = None,
    start: State | None = None,
) -> dict[str, SolveResult]:
    """{"safe": ..., "unsafe": ...} for each mode the search settled (a shortest plan, or proof that
    none exists) from `start` (a state reached from the initial one; default: the initial one); a
    mode missing from the result needs a planner. `on_settled(mode)` is called as soon as a mode is
    settled; the search ends early once `stop` is set. A later search of the same simulator reuses
    the actions grounded so far (the avoidability check's, from a state on the unsafe plan)."""
    started = time.monotonic()
    deadline = started + time_budget
    with _prepared(sim, deadline) as prepared:
        if prepared is None:
            return {}
        search = _Search(prepared, start, started, deadline, node_budget, stop, on_settled)
        try:
            return search.run()
        except GroundingLimit:
            return search.found


@dataclass
class _Prepared:
    """What every search of one simulator shares: its ground task, its interchangeable objects and
    its resources."""

    task: GroundTask
    symmetry: Symmetry
    resources: frozenset[str]
    lock: threading.Lock = field(default_factory=threading.Lock)


_PREPARED: weakref.WeakKeyDictionary[Simulator, _Prepared] = weakref.WeakKeyDictionary()
_PREPARED_LOCK = threading.Lock()


@contextmanager
def _prepared(sim: Simulator, deadline: float) -> Iterator[_Prepared | None]:
    """The simulator's prepared task, kept for its next search; one of its own while another search
    of the same simulator runs; None when grounding passes its budget."""
    with _PREPARED_LOCK:
        kept = _PREPARED.get(sim)
    if kept is not None and kept.lock.acquire(blocking=False):
        try:
            kept.task.deadline = deadline
            yield kept
        finally:
            kept.lock.release()
        return
    try:
        task = ground_task(sim, MAX_GROUND_ACTIONS, deadline)
    except GroundingLimit:
        yield None
        return
    prepared = _Prepared(task, Symmetry(task), resources(sim) if task.numeric else frozenset())
    with prepared.lock:
        if kept is None:
            with _PREPARED_LOCK:
                _PREPARED.setdefault(sim, prepared)
        yield prepared


class _Search:
    def __init__(self, prepared: _Prepared, start: State | None, started: float, deadline: float, node_budget: int, stop, on_settled):
        task = self.task = prepared.task
        self.started, self.deadline, self.node_budget, self.stop = started, deadline, node_budget, stop
        self.root_bits = task.initial if start is None else task.bits_of(start)
        self.resources = prepared.resources
        self.amounts: dict[tuple, list[list[tuple]]] = {}  # a node less its resources -> the amounts seen with it
        self.numbers = task.numbers if start is None else dict(start.numbers)  # those of a task whose numbers never change
        self.on_settled = on_settled
        self.symmetry = prepared.symmetry
        self.found: dict[str, SolveResult] = {}
        self.parents: dict[tuple, tuple | None] = {}

    def run(self) -> dict[str, SolveResult]:
        task = self.task
        root = (self.root_bits, tuple(self.numbers.items()) if task.numeric else (), False)
        self.parents[root] = None
        self._dominated(root)
        if self._goal(root):
            self._settle(root)
        layer = [root]
        expanded = 0
        while layer:
            following = []
            for node in layer:
                expanded += 1
                if expanded > self.node_budget or (expanded % _CHECK_EVERY == 0 and self._out_of_time()):
                    return self.found
                if node[2] and "unsafe" in self.found:
                    continue
                for child, step in self._successors(node):
                    if child in self.parents or (self.resources and self._dominated(child)):
                        continue
                    self.parents[child] = (node, step)
                    if self._goal(child):
                        mode = "unsafe" if child[2] else "safe"
                        if mode not in self.found:
                            self._settle(child)
                            if len(self.found) == 2:
                                return self.found
                    following.append(child)
            layer = following
        seconds = time.monotonic() - self.started
        for mode in ("safe", "unsafe"):
            if mode not in self.found:
                self.found[mode] = SolveResult(mode, "no_plan", ENGINE, seconds=seconds, message="every reachable state searched")
                if self.on_settled is not None:
                    self.on_settled(mode)
        return self.found

    def _dominated(self, node: tuple) -> bool:
        """Whether a node seen already is the same but for at least as much of each resource
        (`safeforge.planning.resources`); if not, `node`'s amounts are kept."""
        bits, numbers, fired = node
        rest: list[tuple] = []
        amounts: list[tuple] = []
        for key, value in numbers:
            (amounts if key[0].lower() in self.resources else rest).append((key, value))
        seen = self.amounts.setdefault((bits, tuple(rest), fired), [])
        if any(_at_least(other, amounts) for other in seen):
            return True
        seen[:] = [other for other in seen if not _at_least(amounts, other)] + [amounts]
        return False

    def _out_of_time(self) -> bool:
        return time.monotonic() > self.deadline or (self.stop is not None and self.stop.is_set())

    def _goal(self, node: tuple) -> bool:
        bits = node[0]
        task = self.task
        if bits & task.goal != task.goal or bits & task.goal_not:
            return False
        if task.goal_tests:
            view = task.view(bits, dict(node[1]) if node[1] else self.numbers)
            return all(Simulator.holds(test, view, {}) for test in task.goal_tests)
        return True

    def _successors(self, node: tuple):
        task = self.task
        bits, numbers_key, fired = node
        numbers = dict(numbers_key) if numbers_key else self.numbers
        view = None
        orbits = self.symmetry.orbits(bits, numbers) if self.symmetry else None
        if not orbits:
            orbits = None  # no group in this state: nothing to prune
        answers: dict[int, bool] = {}  # id of a schema's state tests -> whether they hold here
        for action in task.candidates(bits, orbits.skipped if orbits is not None else 0):
            if bits & action.pre != action.pre or bits & action.pre_not:
                continue
            if orbits is not None and not orbits.keeps(action):
                continue
            if action.state_tests:
                holds = answers.get(id(action.state_tests))
                if holds is None:
                    view = view or task.view(bits, numbers)
                    holds = answers[id(action.state_tests)] = all(Simulator.holds(test, view, {}) for test in action.state_tests)
                if not holds:
                    continue
            if action.tests:
                view = view or task.view(bits, numbers)
                if not all(Simulator.holds(test, view, action.env) for test in action.tests):
                    continue
            add, delete, child_numbers = action.add, action.delete, numbers_key
            fires = fired
            if not fires:
                for must, must_not, test in action.dangers:
                    if test is None:
                        if bits & must == must and not bits & must_not:
                            fires = True
                            break
                    else:
                        view = view or task.view(bits, numbers)
                        if Simulator.holds(test, view, action.env):
                            fires = True
                            break
            if action.slow is not None:
                view = view or task.view(bits, numbers)
                delta = task.sim.effects(action.slow, view)
                for atom in delta.deletes:
                    delete |= task.bit(atom)
                for atom in delta.adds:
                    add |= task.bit(atom)
                delete &= ~add
                fires = fires or bool(delta.danger_fired)
                if delta.numbers:
                    changed = {**numbers, **{k: v for k, v in delta.numbers.items() if k != task.sim.danger_key}}
                    child_numbers = tuple(changed.items()) if task.numeric else ()
            yield ((bits & ~delete) | add, child_numbers, fires), action.text

    def _settle(self, node: tuple) -> None:
        mode = "unsafe" if node[2] else "safe"
        self.found[mode] = SolveResult(mode, "solved", ENGINE, self._plan(node), time.monotonic() - self.started, optimal=True)
        if self.on_settled is not None:
            self.on_settled(mode)

    def _plan(self, node: tuple) -> list[str]:
        steps = []
        link = self.parents[node]
        while link is not None:
            parent, text = link
            steps.append(text)
            link = self.parents[parent]
        return steps[::-1]


def _at_least(one: list[tuple], other: list[tuple]) -> bool:
    """Whether the amounts `one` are each at least those of `other` (the same resources)."""
    return len(one) == len(other) and all(a[0] == b[0] and a[1] >= b[1] for a, b in zip(one, other, strict=True))
