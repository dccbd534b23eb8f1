"""Running a task's plans through SPOC's rules (spoc_rules.py): each PDDL action as the SPOC actions
it takes (safeforge.spoc's step model), each state as AI2-THOR-like object metadata."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

from spoc_rules import Episode

from safeforge.spoc._mapping import Snapshot, ThorView
from safeforge.spoc._skills import skill_trace
from safeforge.task.folder import Task
from safeforge.validation.plan_text import parse_plan

BOOLEANS = ("isToggled", "isOpen", "isDirty", "isCooked", "isFilledWithLiquid", "isBroken", "isSliced", "isPickedUp")
KNOBS = {"StoveBurner": "StoveKnob"}  # in AI2-THOR a knob turns each burner on and off, and reports it


def metadata(view: ThorView, snapshot: Snapshot) -> list[dict]:
    """The snapshot as AI2-THOR reports its objects: one id per PDDL object, its class first, and
    the knob of each stove burner."""
    ids = {obj: f"{view.spoc_type(obj, snapshot)}|{obj}" for obj in view.objects}
    objects = []
    for obj in sorted(view.objects):
        states = {key: False for key in BOOLEANS} | {"temperature": "RoomTemp", "fillLiquid": None}
        states |= {key: value for key, value in snapshot.states[obj].items() if key != "sliced"}
        parents = [ids[p] for p in sorted(snapshot.parents[obj])] or None
        objects.append({"objectId": ids[obj], "parentReceptacles": parents, **states})
        if view.objects[obj] in KNOBS:
            knob = {key: False for key in BOOLEANS} | {"temperature": "RoomTemp", "fillLiquid": None, "isToggled": states["isToggled"]}
            objects.append({"objectId": f"{KNOBS[view.objects[obj]]}|{obj}_knob", "parentReceptacles": None, **knob})
    return objects


def spoc_result(task: Task, document: dict, plan: str) -> tuple[bool, float]:
    """SPOC's (constraint met, sub-goal success rate) for a plan of the task, run as SPOC runs it."""
    view, sim = ThorView(task.model), task.validator.simulator
    state = sim.initial.copy()
    trace = [view.snapshot(state.atoms)]
    for step in parse_plan(plan):
        sim.effects(sim.ground(step.name, step.args), state).apply(state)
        trace.append(view.snapshot(state.atoms))
    checks = skill_trace(trace)
    episode = Episode(document, metadata(view, checks[0]))
    for snapshot in checks[:-1]:
        episode.check(metadata(view, snapshot))
    return episode.score(metadata(view, checks[-1]))


def ground_steps(task: Task) -> list[str]:
    sim = task.validator.simulator
    return [
        f"({' '.join((action.name, *args))})"
        for action in sim.actions.values()
        for args in itertools.product(*(sim.objects_of(t) for _, t in action.parameters))
    ]


def mutations(task: Task, plan: str) -> Iterator[str]:
    """The plan, and the plan with one step inserted, two neighbours swapped, or a step moved later."""
    steps = [str(s) for s in parse_plan(plan)]
    variants = [steps]
    variants += [steps[:i] + [extra] + steps[i:] for i in range(len(steps) + 1) for extra in ground_steps(task)]
    variants += [steps[:i] + [steps[i + 1], steps[i]] + steps[i + 2 :] for i in range(len(steps) - 1)]
    variants += [
        steps[:i] + steps[i + 1 : j + 1] + [steps[i]] + steps[j + 1 :] for i in range(len(steps)) for j in range(i + 1, len(steps))
    ]
    return (" ".join(v) for v in variants)


def variant(tmp_path: Path, source: Path, replacements: dict[str, dict[str, str]], metadata_change=None) -> Task:
    """A copy of a task folder with text replaced in its files (each text must occur) and its
    metadata changed."""
    folder = Path(shutil.copytree(source, tmp_path / source.name))
    for name, pairs in replacements.items():
        text = (folder / name).read_text()
        for old, new in pairs.items():
            assert old in text, (name, old)
            text = text.replace(old, new)
        (folder / name).write_text(text)
    if metadata_change:
        data = json.loads((folder / "metadata.json").read_text())
        metadata_change(data)
        (folder / "metadata.json").write_text(json.dumps(data))
    return Task.load(folder)
