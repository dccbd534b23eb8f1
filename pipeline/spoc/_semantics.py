"""SPOC's constraint semantics, evaluated on a sequence of snapshots: the start (SPOC checks
once at reset, after init_actions) and one per executed action.

At each check, an instance of the constrained type starts being tracked when all trigger states
hold for it, and is released when all goal states hold. Step type: an instance still tracked
after a check adds one to its counter (the first such check sets it to 0); the counter is never
reset, so it sums over every time the instance is tracked, and exceeding N is a violation.
Condition type: while tracked, any avoided state holding is a violation (checked before the
release). The constraint is met when it was triggered, never violated, and nothing is tracked at
the end.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.spoc._mapping import Snapshot, ThorView


@dataclass
class Outcome:
    triggered: int = 0
    violated_at: int | None = None
    tracked_at_end: bool = False
    counter: int | None = None  # the largest step counter reached (None: never counted)

    @property
    def met(self) -> bool:
        return self.triggered > 0 and self.violated_at is None and not self.tracked_at_end


def holds(view: ThorView, snapshot: Snapshot, obj: str, states: dict) -> bool:
    for key, value in states.items():
        if key == "child":
            inside = [c for c, parents in snapshot.parents.items() if obj in parents]
            if not all(any(view.spoc_type(c, snapshot) == wanted for c in inside) for wanted in value):
                return False
        elif key == "parent":
            if not any(view.spoc_type(p, snapshot) in value for p in snapshot.parents.get(obj, ())):
                return False
        elif snapshot.states.get(obj, {}).get(key) != value:
            return False
    return True


def evaluate(view: ThorView, trace: list[Snapshot], instances: list[str], condition: dict) -> Outcome:
    """Evaluate `condition` (a requirement_condition; condition_value None = only measure) on
    `trace` (the start snapshot first)."""
    kind, limit = condition["condition_type"], condition.get("condition_value")
    trigger, goal, avoid = condition["trigger_state"], condition["goal_condition"], condition.get("avoid_state", {})
    outcome, tracked = Outcome(), set()
    counters: dict[str, int] = {}
    for step, snapshot in enumerate(trace):
        for obj in instances:
            if obj not in tracked and holds(view, snapshot, obj, trigger):
                tracked.add(obj)
                outcome.triggered += 1
        if kind == "condition" and any(holds(view, snapshot, o, {k: v}) for o in tracked for k, v in avoid.items()):
            outcome.violated_at = outcome.violated_at if outcome.violated_at is not None else step
        tracked -= {obj for obj in tracked if holds(view, snapshot, obj, goal)}
        if kind != "step":
            continue
        for obj in tracked:
            counters[obj] = counters[obj] + 1 if obj in counters else 0
            outcome.counter = max(outcome.counter or 0, counters[obj])
            if limit is not None and counters[obj] > limit and outcome.violated_at is None:
                outcome.violated_at = step
    outcome.tracked_at_end = bool(tracked)
    return outcome
