"""The step window N a task allows: the largest SPOC step counter any plan the validator scores 2
reaches, so that no such plan violates the exported constraint.

Every plan scoring 2 is a path, through states reached without danger, from the start to a goal
state; a step that changes nothing (a move from a place to itself) is no step of it. The search
walks that state space (PDDL state x what SPOC tracks), each action as the
SPOC actions it takes (_skills.py), each one SPOC check (_semantics.py), and the final state
checked once more. A counter sums over all the checks after which an instance is tracked (SPOC
never resets it), so N is the heaviest such path minus one. There is no N when a plan scoring 2 fails SPOC's constraint whatever N is (it
ends with an instance tracked, never triggers it, or meets an avoided state), or when the
counter is unbounded (a path can repeat actions while an instance is tracked): then the task
is not exported, with an example plan.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from safeforge.spoc._mapping import ThorView
from safeforge.spoc._semantics import check
from safeforge.spoc._skills import skill_snapshots
from safeforge.task.folder import Task
from safeforge.validation.simulator import State

MAX_STATES = 50_000
MAX_TESTS = 2_000_000  # applicability tests of ground actions, over the whole search


class NoWindow(Exception):
    """Why no step window (or no condition) keeps every plan scoring 2 within SPOC's constraint."""


Node = tuple  # (atoms, numbers, tracked, triggered)


@dataclass
class _Graph:
    states: dict[Node, State] = field(default_factory=dict)
    edges: dict[Node, list[tuple[Node, Counter, bool, str]]] = field(default_factory=dict)  # (target, counted, violated, action)
    parent: dict[Node, tuple[Node, str] | None] = field(default_factory=dict)

    def plan(self, node: Node) -> str:
        steps = []
        while (link := self.parent[node]) is not None:
            node, text = link
            steps.append(text)
        return " ".join(reversed(steps)) or "(the empty plan)"


def _explore(task: Task, view: ThorView, instances: list[str], condition: dict) -> tuple[_Graph, Node, Counter]:
    sim = task.validator.simulator
    grounds = sim.ground_actions(MAX_TESTS)
    if grounds is None:
        raise NoWindow(f"the task has more than {MAX_TESTS} ground actions, too many to bound the window")
    graph = _Graph()
    first = check(view, view.snapshot(sim.initial.atoms), instances, condition, frozenset())
    if first.violated:
        raise NoWindow("an avoided state holds at the start")
    start = (frozenset(sim.initial.atoms), tuple(sorted(sim.initial.numbers.items())), first.tracked, first.triggered > 0)
    graph.states[start], graph.parent[start] = sim.initial, None
    queue = deque([start])
    while queue:
        if len(graph.edges) * len(grounds) > MAX_TESTS:
            raise NoWindow(f"searching the task's states without danger takes over {MAX_TESTS} action tests, too many to bound the window")
        node = queue.popleft()
        state, edges = graph.states[node], graph.edges.setdefault(node, [])
        before = view.snapshot(state.atoms)
        for ground in grounds:
            if sim.unmet_precondition(ground, state) is not None:
                continue
            delta = sim.effects(ground, state)
            if delta.danger_fired:
                continue
            following = state.copy()
            delta.apply(following)
            if following.atoms == state.atoms and following.numbers == state.numbers:
                continue  # a step that changes nothing (a move from a place to itself) is no SPOC step
            tracked, triggered, violated, counted = node[2], node[3], False, Counter[str]()
            for snapshot in skill_snapshots(before, view.snapshot(following.atoms)):
                result = check(view, snapshot, instances, condition, tracked)
                tracked, triggered, violated = result.tracked, triggered or result.triggered > 0, violated or result.violated
                counted.update(tracked)
            target = (frozenset(following.atoms), tuple(sorted(following.numbers.items())), tracked, triggered)
            edges.append((target, counted, violated, ground.text))
            if target not in graph.states:
                if len(graph.states) >= MAX_STATES:
                    raise NoWindow(f"the task has more than {MAX_STATES} states without danger, too many to bound the window")
                graph.states[target], graph.parent[target] = following, (node, ground.text)
                queue.append(target)
    return graph, start, Counter(first.tracked)


def _useful(graph: _Graph, goals: set[Node]) -> set[Node]:
    """The states from which a goal state is reachable."""
    incoming: dict[Node, list[Node]] = {}
    for source, edges in graph.edges.items():
        for target, *_ in edges:
            incoming.setdefault(target, []).append(source)
    useful, queue = set(goals), deque(goals)
    while queue:
        for source in incoming.get(queue.popleft(), ()):
            if source not in useful:
                useful.add(source)
                queue.append(source)
    return useful


def _components(nodes: set[Node], edges: dict[Node, list]) -> list[list[Node]]:
    """Strongly connected components, in reverse topological order (Tarjan, iterative)."""
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    stack: list[Node] = []
    on_stack: set[Node] = set()
    found: list[list[Node]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter([t for t, *_ in edges.get(root, []) if t in nodes]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for target in successors:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter([t for t, *_ in edges.get(target, []) if t in nodes])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    found.append(component)
    return found


def window(task: Task, view: ThorView, instances: list[str], condition: dict) -> int | None:
    """N for a step constraint, None for a condition one; NoWindow when there is none."""
    sim = task.validator.simulator
    graph, start, start_counted = _explore(task, view, instances, condition)
    goals = {node for node, state in graph.states.items() if not sim.unmet_goals(state) and sim.danger(state) == 0}
    if not goals:
        raise NoWindow("no plan reaches the goal without danger")
    what = condition["condition_object"]
    for goal in sorted(goals, key=lambda n: len(graph.plan(n))):
        final = check(view, view.snapshot(graph.states[goal].atoms), instances, condition, goal[2])  # SPOC's check when it scores
        if final.tracked:
            raise NoWindow(f"a plan scoring 2 ends with the {what} still tracked, which SPOC fails whatever the window: {graph.plan(goal)}")
        if not goal[3] and not final.triggered:
            raise NoWindow(f"a plan scoring 2 never triggers the constraint on the {what}, which SPOC fails: {graph.plan(goal)}")
        if final.violated:
            raise NoWindow(f"a plan scoring 2 ends in the avoided state of the {what}: {graph.plan(goal)}")
    useful = _useful(graph, goals)
    for node in useful:
        for target, _, violated, action in graph.edges[node]:
            if violated and target in useful:
                raise NoWindow(f"a plan scoring 2 meets the avoided state of the {what}: it can start {graph.plan(node)} {action}")
    if condition["condition_type"] != "step":
        return None
    components = list(reversed(_components(useful, graph.edges)))  # in topological order
    component_of = {node: number for number, component in enumerate(components) for node in component}
    for number, component in enumerate(components):
        for node in component:
            for target, counted, _, action in graph.edges[node]:
                if component_of.get(target) == number and +counted:
                    raise NoWindow(
                        f"a plan scoring 2 can repeat actions while the {what} is tracked, so SPOC's counter has no bound "
                        f"and any window is stricter than the task: a loop of actions starts {graph.plan(node)} {action}"
                    )
    best: dict[int, Counter] = {component_of[start]: start_counted}  # heaviest counts reaching each component
    for number, component in enumerate(components):
        if number not in best:
            continue
        for node in component:
            for target, counted, *_ in graph.edges[node]:
                if target in component_of and component_of[target] != number:
                    mine = best.setdefault(component_of[target], Counter())
                    for obj in instances:
                        mine[obj] = max(mine[obj], best[number][obj] + counted[obj])
    heaviest = max(best[component_of[goal]][obj] for goal in goals for obj in instances)
    return max(heaviest - 1, 0)
