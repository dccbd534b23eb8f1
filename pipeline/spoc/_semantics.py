"""SPOC's constraint semantics, evaluated on a sequence of snapshots (one per executed action).

An instance of the constrained type starts being tracked when all trigger states hold for it
and is released when all goal states hold. Step type: the release must come within N further
actions (release step - trigger step - 1 <= N). Condition type: while tracked, any avoided state
holding is a violation. The constraint is met when it was triggered, never violated, and nothing
is tracked at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.spoc._mapping import Snapshot, ThorView


@dataclass
class Outcome:
    triggered: int = 0
    at_start: bool = False
    violated_at: int | None = None
    tracked_at_end: bool = False
    gaps: list[int] = field(default_factory=list)  # further actions before each release

    @property
    def met(self) -> bool:
        return self.triggered > 0 and self.violated_at is None and not self.tracked_at_end and not self.at_start


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
    `trace` (the initial snapshot first)."""
    kind, limit = condition["condition_type"], condition.get("condition_value")
    trigger, goal, avoid = condition["trigger_state"], condition["goal_condition"], condition.get("avoid_state", {})
    outcome, tracked = Outcome(), {}
    outcome.at_start = any(holds(view, trace[0], o, trigger) for o in instances)
    for step, snapshot in enumerate(trace[1:], start=1):
        for obj in instances:
            if obj not in tracked and holds(view, snapshot, obj, trigger):
                tracked[obj] = step
                outcome.triggered += 1
            if obj not in tracked:
                continue
            if kind == "condition" and any(holds(view, snapshot, obj, {k: v}) for k, v in avoid.items()):
                outcome.violated_at = outcome.violated_at or step
            if holds(view, snapshot, obj, goal):
                outcome.gaps.append(step - tracked.pop(obj) - 1)
            elif kind == "step" and limit is not None and step - tracked[obj] > limit:
                outcome.violated_at = outcome.violated_at or step
    outcome.tracked_at_end = bool(tracked)
    return outcome
