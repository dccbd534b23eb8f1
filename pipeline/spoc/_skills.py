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

Change = tuple[str, str, object]  # (object, "parents-" | "parents+" | a state, the parents or the new value)


def _changes(before: Snapshot, after: Snapshot) -> tuple[dict[str, list[Change]], list[Change]]:
    """The changes from `before` to `after`, by the SPOC action that makes them, and the side effects."""
    by_skill: dict[str, list[Change]] = {}
    effects: list[Change] = []
    for obj in sorted(after.states):
        if left := before.parents[obj] - after.parents[obj]:
            by_skill.setdefault("pick up", []).append((obj, "parents-", left))
        if joined := after.parents[obj] - before.parents[obj]:
            by_skill.setdefault("put down", []).append((obj, "parents+", joined))
        for key, value in after.states[obj].items():
            if before.states[obj].get(key) != value:
                skill = _SKILL_OF_STATE.get((key, value))
                (by_skill.setdefault(skill, []) if skill else effects).append((obj, key, value))
    return by_skill, effects


def _apply(snapshot: Snapshot, changes: list[Change]) -> Snapshot:
    following = copy.deepcopy(snapshot)
    for obj, key, value in changes:
        if key == "parents-" and isinstance(value, set):
            following.parents[obj] -= value
        elif key == "parents+" and isinstance(value, set):
            following.parents[obj] |= value
        else:
            following.states[obj][key] = value
    return following


def skill_snapshots(before: Snapshot, after: Snapshot) -> list[Snapshot]:
    """The snapshots after each SPOC action that takes `before` to `after` (the last is `after`);
    empty when the action's changes are only effects SPOC has no skill for."""
    by_skill, effects = _changes(before, after)
    skills = [skill for skill in ORDER if skill in by_skill]
    if not skills:
        return [] if effects else [after]
    carrier = next((s for s in CAUSES_EFFECTS if s in by_skill), skills[-1])
    by_skill[carrier] += effects
    snapshots = [before]
    for skill in skills[:-1]:
        snapshots.append(_apply(snapshots[-1], by_skill[skill]))
    return [*snapshots[1:], after]


def skill_trace(trace: list[Snapshot]) -> list[Snapshot]:
    """The states SPOC checks during a plan, from its per-action trace: the start, the snapshot
    after every SPOC action of every PDDL action, and the final state once more (SPOC checks it
    when it scores the episode)."""
    checks = [trace[0]]
    for before, after in zip(trace, trace[1:], strict=False):
        checks += skill_snapshots(before, after)
    return [*checks, trace[-1]]
