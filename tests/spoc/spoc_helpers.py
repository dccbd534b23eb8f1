"""Running a task's plans through SPOC's rules (spoc_rules.py): each PDDL action as the SPOC actions
it takes (safeforge.spoc's step model), each state as AI2-THOR-like object metadata of the whole
scene: the task's objects, and beside them every type the scene catalogue says the scene holds,
with its known ids and one more object of each type (how many a scene holds is not known), in the
states the file's init_actions give them."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

from spoc_rules import Episode
from tests_paths import REPO, SAMPLES

from safeforge.spoc._mapping import Snapshot, ThorView
from safeforge.spoc._skills import skill_trace
from safeforge.task.folder import Task
from safeforge.validation.plan_text import parse_plan

BOOLEANS = ("isToggled", "isOpen", "isDirty", "isCooked", "isFilledWithLiquid", "isBroken", "isSliced", "isPickedUp")
KNOBS = {"StoveBurner": "StoveKnob"}  # in AI2-THOR a knob turns each burner on and off, and reports it
ACTION_STATES = {  # AI2-THOR actions on one object (by id) and the state each sets
    "ToggleObjectOn": ("isToggled", True), "ToggleObjectOff": ("isToggled", False), "OpenObject": ("isOpen", True),
    "CloseObject": ("isOpen", False), "DirtyObject": ("isDirty", True), "CleanObject": ("isDirty", False),
    "FillObjectWithLiquid": ("isFilledWithLiquid", True), "EmptyLiquidFromObject": ("isFilledWithLiquid", False),
    "CookObject": ("isCooked", True),
}  # fmt: skip
SET_OBJECT_STATES = {"isSliced", "isOpen", "isToggled", "isDirty", "isCooked", "isFilledWithLiquid", "isBroken"}


def _blank(object_id: str) -> dict:
    return {
        "objectId": object_id,
        "parentReceptacles": None,
        **{key: False for key in BOOLEANS},
        "temperature": "RoomTemp",
        "fillLiquid": None,
    }


def _type_of(object_id: str) -> str:
    parts = object_id.split("|")
    return "Sink" if parts[-1] == "SinkBasin" else parts[0]


def scene_objects(document: dict, taken: set[str]) -> list[dict]:
    """The scene's other objects after the file's init_actions: every type the scene catalogue
    says it holds, with its known ids not `taken` by the task's objects and one more object."""
    scene = json.loads((REPO / "pipeline" / "spoc" / "scenes.json").read_text())["scenes"][document["scene_name"]]
    known = scene.get("object_ids", {})
    objects = {}
    for type_name in scene["held"]:
        name = "Sink" if type_name == "SinkBasin" else type_name
        for object_id in [*known.get(type_name, []), f"{name}|other"]:
            if object_id not in taken:
                objects[object_id] = _blank(object_id)
    for action in document.get("init_actions", []):
        args = action["args"]
        if action["action"] == "SetObjectStates":
            spec = args["SetObjectStates"]
            for obj in objects.values():
                if _type_of(obj["objectId"]) == spec["objectType"]:
                    obj.update({k: v for k, v in spec.items() if k in SET_OBJECT_STATES})
        elif action["action"] in ACTION_STATES and args.get("objectId") in objects:
            key, value = ACTION_STATES[action["action"]]
            objects[args["objectId"]][key] = value
    return list(objects.values())


def _ids(view: ThorView, snapshot: Snapshot, document: dict) -> dict[str, str]:
    """Each PDDL object's id: the one the file's init_actions name for an object of its type, else its own."""
    named = [a["args"]["objectId"] for a in document.get("init_actions", []) if isinstance(a["args"].get("objectId"), str)]
    ids = {}
    for obj in sorted(view.objects):
        type_name = view.spoc_type(obj, snapshot)
        found = next((i for i in named if _type_of(i) == type_name and i not in ids.values()), None)
        ids[obj] = found or f"{type_name}|{obj}"
    return ids


def metadata(view: ThorView, snapshot: Snapshot, document: dict, others: list[dict]) -> list[dict]:
    """The snapshot as AI2-THOR reports its objects: the task's objects (by the ids the file names,
    a sliced one as its *Sliced type), the knob of each stove burner, and the scene's `others`."""
    ids = _ids(view, snapshot, document)
    objects = []
    for obj in sorted(view.objects):
        states = _blank(ids[obj]) | {key: value for key, value in snapshot.states[obj].items() if key != "sliced"}
        states["parentReceptacles"] = [ids[p] for p in sorted(snapshot.parents[obj])] or None
        objects.append(states)
        if view.objects[obj] in KNOBS:
            objects.append(_blank(f"{KNOBS[view.objects[obj]]}|{obj}_knob") | {"isToggled": states["isToggled"]})
    return objects + others


def spoc_result(task: Task, document: dict, plan: str) -> tuple[bool, float]:
    """SPOC's (constraint met, sub-goal success rate) for a plan of the task, run as SPOC runs it in
    the whole scene."""
    view, sim = ThorView(task.model), task.validator.simulator
    state = sim.initial.copy()
    trace = [view.snapshot(state.atoms)]
    for step in parse_plan(plan):
        sim.effects(sim.ground(step.name, step.args), state).apply(state)
        trace.append(view.snapshot(state.atoms))
    checks = skill_trace(trace)
    others = scene_objects(document, set(_ids(view, checks[0], document).values()))
    episode = Episode(document, metadata(view, checks[0], document, others))
    for snapshot in checks[:-1]:
        episode.check(metadata(view, snapshot, document, others))
    return episode.score(metadata(view, checks[-1], document, others))


def start_after_init(task: Task, document: dict, restored: set[tuple[str, str]]) -> tuple[dict[str, dict], dict[str, set[str]]]:
    """The task's objects as AI2-THOR holds them after the file's init_actions, from a scene that
    starts as AI2-THOR loads it (every state false, positions unknown): (states, parents) by PDDL
    object. `restored`: the (type, receptacle type) pairs a SetObjectPoses of ALFRED's restore makes hold."""
    view = ThorView(task.model)
    start = view.snapshot(task.validator.simulator.initial.atoms)
    ids = _ids(view, start, document)
    by_id = {i: obj for obj, i in ids.items()}
    states = {obj: {key: False for key in BOOLEANS} for obj in view.objects}
    parents: dict[str, set[str]] = {obj: set() for obj in view.objects}
    held = None
    for action in document.get("init_actions", []):
        name, args = action["action"], action["args"]
        if name == "SetObjectStates":
            spec = args["SetObjectStates"]
            for obj in view.objects:
                if view.spoc_type(obj, start) == spec["objectType"] or (
                    spec["objectType"] == "StoveKnob" and view.objects[obj] == "StoveBurner"
                ):
                    states[obj].update({k: v for k, v in spec.items() if k in SET_OBJECT_STATES})
        elif name == "SetObjectPoses":
            for obj in view.objects:
                parents[obj] |= {p for p in view.objects if (view.objects[obj], view.objects[p]) in restored}
        elif name in ACTION_STATES and args["objectId"] in by_id:
            key, value = ACTION_STATES[name]
            states[by_id[args["objectId"]]][key] = value
        elif name == "PickupObject":
            held = by_id.get(args["objectId"])
        elif name == "PutObject" and held is not None:
            parents[held] = {by_id[args["objectId"]]}
            held = None
    return states, parents


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


def assert_start_holds(task: Task, document: dict, warnings: list[str]) -> None:
    """After the file's init_actions, from a scene as AI2-THOR loads it, every start state of the
    task's objects holds, and each start position holds or is named in one of the export's warnings."""
    view = ThorView(task.model)
    start = view.snapshot(task.validator.simulator.initial.atoms)
    states, parents = start_after_init(task, document, _trajectory_pairs(document, task))
    for obj in view.objects:
        for key, value in start.states[obj].items():
            if key in states[obj] and key not in ("isSliced",):
                assert states[obj][key] == value, (task.metadata.task_id, obj, key)
        for parent in start.parents[obj]:
            named = any(f"the {obj} " in w and f"the {parent};" in w for w in warnings)
            assert parent in parents[obj] or named, (task.metadata.task_id, obj, parent)


def _trajectory_pairs(document: dict, task: Task) -> set[tuple[str, str]]:
    """What ALFRED's restore of the task's trajectory holds: where its plan first picks each type up."""
    origin = str(task.metadata.provenance.model_dump().get("origin") or "")
    if not any(a["action"] == "SetObjectPoses" for a in document["init_actions"]):
        return set()
    trajectory = json.loads((SAMPLES / "alfred" / origin.removeprefix("alfred@sample/")).read_text())
    scene = json.loads((REPO / "pipeline" / "spoc" / "scenes.json").read_text())["scenes"][document["scene_name"]]
    [poses] = [a["args"]["objectPoses"] for a in document["init_actions"] if a["action"] == "SetObjectPoses"]
    pairs = {
        (pose["objectName"].split("_")[0], receptacle.replace("SinkBasin", "Sink"))
        for pose, original in zip(poses, trajectory["scene"]["object_poses"], strict=True)
        for receptacle, inside in scene["start_poses"].items()
        if pose != original and (pose["position"], pose["rotation"]) == (inside["position"], inside["rotation"])
    }
    seen = set()
    for step in trajectory["plan"]["high_pddl"]:
        action = step["planner_action"]
        if action["action"] == "PickupObject" and action["coordinateObjectId"][0] not in seen:
            seen.add(action["coordinateObjectId"][0])
            pairs.add((action["coordinateObjectId"][0], action["coordinateReceptacleObjectId"][0].replace("SinkBasin", "Sink")))
    return pairs
