"""A plan as SPOC runs it: each PDDL action becomes the AI2-THOR skills its visible changes take,
one SPOC check after each.

A PDDL action's changes, in SPOC terms, split into skills in a fixed order: open, pick up (an
object leaves its parents), put (it gets new ones), the other state changes of each object
(toggle, clean, slice, fill, cook, break), close. Temperature follows from the others (it is
set with the last skill). An action with no visible change (moving, waiting) is one skill, as
SPOC's `go to`.
"""

from __future__ import annotations

import copy

from safeforge.spoc._mapping import Snapshot

DERIVED = ("temperature",)  # states AI2-THOR changes itself, not a skill


def _with(snapshot: Snapshot, change) -> Snapshot:
    following = copy.deepcopy(snapshot)
    change(following)
    return following


def skill_snapshots(before: Snapshot, after: Snapshot) -> list[Snapshot]:
    """The snapshots after each skill that takes `before` to `after` (the last is `after`)."""
    objects = sorted(after.states)

    def opened(o: str, value: bool) -> bool:
        return before.states[o].get("isOpen") is not value and after.states[o].get("isOpen") is value

    def other_states(o: str) -> dict:
        return {k: v for k, v in after.states[o].items() if k != "isOpen" and k not in DERIVED and before.states[o].get(k) != v}

    left = {o: before.parents[o] - after.parents[o] for o in objects}
    joined = {o: after.parents[o] - before.parents[o] for o in objects}
    changes = [lambda s, o=o: s.states[o].update(isOpen=True) for o in objects if opened(o, True)]
    changes += [lambda s, o=o: s.parents[o].difference_update(left[o]) for o in objects if left[o]]
    changes += [lambda s, o=o: s.parents[o].update(joined[o]) for o in objects if joined[o]]
    changes += [lambda s, o=o: s.states[o].update(other_states(o)) for o in objects if other_states(o)]
    changes += [lambda s, o=o: s.states[o].update(isOpen=False) for o in objects if opened(o, False)]
    snapshots, current = [], before
    for change in changes[:-1]:
        current = _with(current, change)
        snapshots.append(current)
    return [*snapshots, after]


def skill_trace(trace: list[Snapshot]) -> list[Snapshot]:
    """The start, then the snapshot after every skill of every action of a per-action trace."""
    skills = [trace[0]]
    for before, after in zip(trace, trace[1:], strict=False):
        skills += skill_snapshots(before, after)
    return skills
