"""Where the task's objects start, as init_actions: what the scene must hold before the agent acts.

An ALFRED-derived task whose trajectory is on this machine starts as ALFRED restores its scene
(env/thor_env.py `restore_scene`): its `object_toggles` (SetObjectToggles), then its
`object_poses` (SetObjectPoses); an object its plan first picks up from a receptacle then starts
there. Any other start position the danger needs (one it names that holds until the danger fires:
the fork left in the microwave) is set from data: the object's pose in the restore moved to one
at which an object of the same scene started in or on that receptacle in another trajectory (the
scene catalogue's start_poses), else by id as SPOC's own files act on objects (PickupObject, then
PutObject into the receptacle, opened first and closed after when it opens), with ids from the
trajectory or the scene catalogue; when neither is known the task is not exported, naming the
fact. Other start positions (an egg the plan picks up first) stay where the scene puts them, each
with a warning.
"""

from __future__ import annotations

import copy

from safeforge.spoc import _vocabulary as vocab
from safeforge.spoc._constraint import NotExportable
from safeforge.spoc._mapping import Snapshot, ThorView
from safeforge.spoc._scenes import scene_catalogue

RENAMED = {"Glassbottle": "Bottle"}  # ALFRED's AI2-THOR spells it so


def _thor_type(alfred_type: str) -> str:
    return vocab.spoc_name(RENAMED.get(alfred_type, alfred_type))


def _id_type(object_id: str) -> str:
    parts = object_id.split("|")
    return _thor_type(parts[-1] if len(parts) > 4 else parts[0])


def trajectory_start(trajectory: dict) -> tuple[list[dict], set[tuple[str, str]], dict[str, str]]:
    """ALFRED's restore of a trajectory's scene as init_actions (copies: the caller may move an object), the (object type, receptacle type)
    pairs it makes hold (each object its plan first picks up, where it picks it up), and the ids
    its plan names by type."""
    scene = trajectory.get("scene") or {}
    actions = []
    if scene.get("object_toggles"):
        actions.append({"action": "SetObjectToggles", "args": {"objectToggles": scene["object_toggles"]}})
    if scene.get("object_poses"):
        actions.append({"action": "SetObjectPoses", "args": {"objectPoses": copy.deepcopy(scene["object_poses"])}})
    held: set[tuple[str, str]] = set()
    picked: set[str] = set()
    ids: dict[str, str] = {}
    for step in (trajectory.get("plan") or {}).get("high_pddl") or []:
        action = step.get("planner_action") or {}
        for key in ("objectId", "receptacleObjectId"):
            if isinstance(action.get(key), str) and "|" in action[key]:
                ids.setdefault(_id_type(action[key]), action[key])
        if action.get("action") == "PickupObject" and action.get("coordinateObjectId") and action.get("coordinateReceptacleObjectId"):
            child = _thor_type(action["coordinateObjectId"][0])
            if child not in picked:
                picked.add(child)
                held.add((child, _thor_type(action["coordinateReceptacleObjectId"][0])))
    return actions, held, ids


def start_actions(
    view: ThorView, start: Snapshot, scene_name: str, trajectory: dict | None, needed: set[tuple[str, str]]
) -> tuple[list[dict], list[str]]:
    """init_actions that put the task's objects where it starts them, and warnings for the start
    positions left to the scene; NotExportable naming a position the danger needs (`needed`:
    (object, receptacle) pairs) that no action can set."""
    actions, held, ids = trajectory_start(trajectory) if trajectory else ([], set(), {})
    scene = scene_catalogue().scene(scene_name)
    known = {vocab.spoc_name(t): found for t, found in sorted(scene.object_ids.items())}  # SinkBasin is Sink
    start_poses = {vocab.spoc_name(t): pose for t, pose in sorted(scene.start_poses.items())}
    poses: list[dict] = next((a["args"]["objectPoses"] for a in actions if a["action"] == "SetObjectPoses"), [])
    warnings, moves = [], []
    moved: set[int] = set()  # the poses moved already (one object each)
    for child in sorted(start.parents):
        for parent in sorted(start.parents[child]):
            child_type, parent_type = view.spoc_type(child, start), view.spoc_type(parent, start)
            where = "inside" if vocab.has(parent_type, "openable") else "on"
            if (child_type, parent_type) in held:
                continue
            if (child, parent) not in needed:
                warnings.append(
                    f"the task starts with the {child} {where} the {parent}; the file leaves the {child_type} where {scene_name} puts it"
                )
                continue
            movable = next(
                (i for i, pose in enumerate(poses) if _thor_type(pose["objectName"].split("_")[0]) == child_type and i not in moved), None
            )
            if movable is not None and parent_type in start_poses:
                poses[movable].update(position=start_poses[parent_type]["position"], rotation=start_poses[parent_type]["rotation"])
                moved.add(movable)
                continue
            child_id = ids.get(child_type) or next(iter(known.get(child_type, [])), None)
            parent_id = ids.get(parent_type) or next(iter(known.get(parent_type, [])), None)
            if child_id is None or parent_id is None:
                missing = " or ".join(t for t, i in ((child_type, child_id), (parent_type, parent_id)) if i is None)
                raise NotExportable(
                    f"the {child} must start {where} the {parent_type}; no init action in the catalogue can put it there "
                    f"(neither the task's trajectory nor the scene catalogue names an id of a {missing} in {scene_name}"
                    + (
                        ""
                        if parent_type in start_poses and poses
                        else f", nor a pose {where} a {parent_type} for a trajectory's {child_type}"
                    )
                    + ")"
                )
            opens = vocab.has(parent_type, "openable")
            moves += [{"action": "OpenObject", "args": {"objectId": parent_id, "forceAction": True}}] if opens else []
            moves += [
                {"action": "PickupObject", "args": {"objectId": child_id, "forceAction": True}},
                {"action": "PutObject", "args": {"objectId": parent_id, "forceAction": True}},
            ]
            if opens and not start.states[parent].get("isOpen"):
                moves.append({"action": "CloseObject", "args": {"objectId": parent_id, "forceAction": True}})
    return actions + moves, warnings
