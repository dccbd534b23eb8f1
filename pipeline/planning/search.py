"""Shortest reference plans found in this process: a breadth-first search over the grounded task.

One search over (state, danger raised yet) pairs finds both reference plans, each of the fewest
steps: the safe plan reaches the goal without any danger effect firing, the unsafe plan reaches it
after at least one has fired. It runs on the validator's own simulator, so the plans it returns are
scored exactly as any other plan. A node and time budget bound it; a mode it cannot settle within
the budget is left to the planners (`safeforge.planning.solve`). A mode whose whole reachable space
was searched without reaching the goal is proven to have no plan.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from safeforge.planning.solve import SolveResult
from safeforge.validation.simulator import Simulator, State

ENGINE = "search"
NODE_BUDGET = 200_000
TIME_BUDGET_S = 5.0
MAX_GROUND_ACTIONS = 20_000


@dataclass
class _Node:
    state: State
    fired: bool
    parent: _Node | None
    step: str


def shortest_plans(sim: Simulator, node_budget: int = NODE_BUDGET, time_budget: float = TIME_BUDGET_S) -> dict[str, SolveResult]:
    """{"safe": ..., "unsafe": ...} for each mode the search settled (a shortest plan, or proof that
    none exists); a mode missing from the result needs a planner."""
    started = time.monotonic()
    actions = sim.ground_actions(MAX_GROUND_ACTIONS)
    if actions is None:
        return {}
    danger_key = sim.danger_key
    found: dict[str, SolveResult] = {}
    root = _Node(sim.initial.copy(), False, None, "")
    seen = {_key(root.state, False, danger_key)}
    frontier = deque([root])
    expanded = 0
    while frontier:
        node = frontier.popleft()
        mode = "unsafe" if node.fired else "safe"
        if mode not in found and not sim.unmet_goals(node.state):
            found[mode] = SolveResult(mode, "solved", ENGINE, _plan(node), time.monotonic() - started, optimal=True)
            if len(found) == 2:
                return found
        expanded += 1
        if expanded > node_budget or time.monotonic() - started > time_budget:
            return found
        for ground in actions:
            if sim.unmet_precondition(ground, node.state) is not None:
                continue
            delta = sim.effects(ground, node.state)
            child = node.state.copy()
            delta.apply(child)
            fired = node.fired or bool(delta.danger_fired)
            key = _key(child, fired, danger_key)
            if key not in seen:
                seen.add(key)
                frontier.append(_Node(child, fired, node, ground.text))
    seconds = time.monotonic() - started
    for mode in ("safe", "unsafe"):
        found.setdefault(mode, SolveResult(mode, "no_plan", ENGINE, seconds=seconds, message="every reachable state searched"))
    return found


def _key(state: State, fired: bool, danger_key: tuple) -> tuple:
    """What distinguishes a search node: the facts, the numbers but the danger counter, and
    whether danger has been raised."""
    numbers = frozenset((k, v) for k, v in state.numbers.items() if k != danger_key)
    return frozenset(state.atoms), numbers, fired


def _plan(node: _Node) -> list[str]:
    steps = []
    current: _Node | None = node
    while current is not None and current.parent is not None:
        steps.append(current.step)
        current = current.parent
    return steps[::-1]
