"""A plan as SPOC runs it: each PDDL action becomes the SPOC actions its visible changes take, with
one SPOC check after each.

SPOC's agent acts through one skill per action (go to, open, close, pick up, put down, turn on,
turn off, slice, break, empty). A PDDL action's changes, read in SPOC terms, become those actions
in a fixed order that follows the skills' own preconditions (hands free to open or toggle): open,
turn off, pick up, put down, turn on, slice, break, empty, close. All changes of one kind form one
action, whatever the objects are named. SPOC has no skill for the other changes (cooking,
heating or cooling, filling, cleaning or soiling): they happen inside the action that causes
them, turning something on, else putting something down, else the action's last SPOC action. An
action with no visible change (moving) is one action, as SPOC's `go to`; an action whose only
changes are such effects (heating after the microwave was turned on) is none: its changes show
at SPOC's next check.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from safeforge.spoc._mapping import Snapshot

ORDER = ("open", "turn off", "pick up", "put down", "turn on", "slice", "break", "empty", "close")
CAUSES_EFFECTS = ("turn on", "put down")  # the first of these an action takes carries its side effects
_SKILL_OF_STATE = {  # (state, new value) -> the SPOC action that makes the change
    ("isOpen", True): "open",
    ("isOpen", False): "close",
    ("isToggled", True): "turn on",
    ("isToggled", False): "turn off",
    ("sliced", True): "slice",
    ("isBroken", True): "break",
    ("isFilledWithLiquid", False): "empty",
}

Change = Callable[[Snapshot], None]


def _changes(before: Snapshot, after: Snapshot) -> tuple[dict[str, list[Change]], list[Change]]:
    """The changes from `before` to `after`, by the SPOC action that makes them, and the side effects."""
    by_skill: dict[str, list[Change]] = {}
    effects: list[Change] = []
    for obj in sorted(after.states):
        left, joined = before.parents[obj] - after.parents[obj], after.parents[obj] - before.parents[obj]
        if left:
            by_skill.setdefault("pick up", []).append(lambda s, o=obj, p=left: s.parents[o].difference_update(p))
        if joined:
            by_skill.setdefault("put down", []).append(lambda s, o=obj, p=joined: s.parents[o].update(p))
        for key, value in after.states[obj].items():
            if before.states[obj].get(key) == value:
                continue
            change = lambda s, o=obj, k=key, v=value: s.states[o].__setitem__(k, v)  # noqa: E731
            skill = _SKILL_OF_STATE.get((key, value))
            (by_skill.setdefault(skill, []) if skill else effects).append(change)
    return by_skill, effects


def skill_snapshots(before: Snapshot, after: Snapshot) -> list[Snapshot]:
    """The snapshots after each SPOC action that takes `before` to `after` (the last is `after`);
    empty when the action's changes are only effects SPOC has no skill for."""
    by_skill, effects = _changes(before, after)
    skills = [skill for skill in ORDER if skill in by_skill]
    if not skills:
        return [] if effects else [after]
    carrier = next((s for s in CAUSES_EFFECTS if s in by_skill), skills[-1])
    by_skill[carrier] += effects
    snapshots, current = [], before
    for skill in skills[:-1]:
        current = copy.deepcopy(current)
        for change in by_skill[skill]:
            change(current)
        snapshots.append(current)
    return [*snapshots, after]


def skill_trace(trace: list[Snapshot]) -> list[Snapshot]:
    """The states SPOC checks during a plan, from its per-action trace: the start, the snapshot
    after every SPOC action of every PDDL action, and the final state once more (SPOC checks it
    when it scores the episode)."""
    checks = [trace[0]]
    for before, after in zip(trace, trace[1:], strict=False):
        checks += skill_snapshots(before, after)
    return [*checks, trace[-1]]
