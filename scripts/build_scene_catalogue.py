#!/usr/bin/env python
"""Derive pipeline/spoc/scenes.json, the catalogue of which AI2-THOR object types each iTHOR scene
holds, from an ALFRED checkout (github.com/askforalfred/alfred, MIT).

ALFRED holds, for each of the 120 iTHOR scenes, the list of the object types present when the scene
is loaded (`gen/layouts/FloorPlan<N>-objects.json`, written by its generator from AI2-THOR 2.1.0's
metadata) and, until 2025, its 8,051 trajectories (`data/json_2.1.0/**/traj_data.json`), each naming
the movable objects of its scene (`scene.object_poses`) and the objects its plan acts on. The data
left the repository in d2dead62; the default revision, 495d2c39, still has both.

    .venv/bin/python scripts/build_scene_catalogue.py ALFRED [--rev REV] [--out pipeline/spoc/scenes.json]

ALFRED is a git repository (bare or not: read at REV) or a plain folder holding the same files (a
checkout, or the unpacked json_2.1.0 download beside gen/layouts). The product and its tests read
only the file this writes.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REV = "495d2c39ee3db399696a5c58512faf3c8d8f122c"
OUT = REPO / "pipeline" / "spoc" / "scenes.json"
TYPES = REPO / "pipeline" / "spoc" / "ai2thor_types.json"
LAYOUT = re.compile(r"(^|/)gen/layouts/FloorPlan(\d+)-objects\.json$")
OPENABLE = re.compile(r"(^|/)gen/layouts/FloorPlan(\d+)-openable\.json$")
TRAJECTORY = re.compile(r"(^|/)json_2\.1\.0/.+/traj_data\.json$")
ROOM_TYPES = {"Kitchen": (1, 30), "LivingRoom": (201, 230), "Bedroom": (301, 330), "Bathroom": (401, 430)}
RENAMED = {"Glassbottle": "Bottle"}  # ALFRED's AI2-THOR build spells it so; AI2-THOR's type is Bottle


class GitTree:
    """Files of a git repository at one revision, read with git itself."""

    def __init__(self, repo: Path, rev: str):
        self.repo, self.rev = repo, rev
        listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", rev], capture_output=True, text=True)
        if listing.returncode != 0:
            raise SystemExit(f"{repo}: cannot list revision {rev}: {listing.stderr.strip()}")
        self.paths = listing.stdout.splitlines()

    def read_all(self, paths: list[str]) -> Iterator[tuple[str, bytes]]:
        with subprocess.Popen(["git", "-C", str(self.repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as cat:
            assert cat.stdin is not None and cat.stdout is not None
            for path in paths:
                cat.stdin.write(f"{self.rev}:{path}\n".encode())
                cat.stdin.flush()
                header = cat.stdout.readline().split()
                if len(header) != 3:
                    raise SystemExit(f"{self.repo}: cannot read {path} at {self.rev}")
                data = cat.stdout.read(int(header[2]))
                cat.stdout.read(1)
                yield path, data
            cat.stdin.close()


class FolderTree:
    """Files under a plain folder."""

    def __init__(self, root: Path):
        self.root = root
        self.paths = sorted(str(p.relative_to(root)) for p in root.rglob("*.json"))

    def read_all(self, paths: list[str]) -> Iterator[tuple[str, bytes]]:
        for path in paths:
            yield path, (self.root / path).read_bytes()


def open_tree(path: Path, rev: str) -> GitTree | FolderTree:
    is_git = (path / ".git").exists() or ((path / "objects").is_dir() and (path / "HEAD").is_file())
    return GitTree(path, rev) if is_git else FolderTree(path)


def room_type(scene: int) -> str:
    return next(name for name, (low, high) in ROOM_TYPES.items() if low <= scene <= high)


def trajectory_ids(trajectory: dict) -> set[str]:
    """AI2-THOR object ids a trajectory's plan acts on (`Type|x|y|z`, a sink basin `Sink|x|y|z|SinkBasin`)."""
    plan = trajectory.get("plan", {})
    actions = [a["api_action"] for a in plan.get("low_actions", [])] + [a["planner_action"] for a in plan.get("high_pddl", [])]
    return {
        action[key]
        for action in actions
        for key in ("objectId", "receptacleObjectId")
        if isinstance(action.get(key), str) and "|" in action[key]
    }


def id_type(object_id: str) -> str:
    """The AI2-THOR type of an object id: its last part naming a type (`Sink|...|SinkBasin` is a SinkBasin)."""
    parts = object_id.split("|")
    return parts[-1] if len(parts) > 4 else parts[0]


def start_poses(trajectory: dict) -> Iterator[tuple[str, dict]]:
    """(receptacle type, pose) for each object the trajectory's plan first picks up where the
    object starts: its pose in `scene.object_poses` (the one of its type nearest the position the
    plan gives, which ALFRED writes four times larger)."""
    poses, picked = trajectory["scene"].get("object_poses", []), set()
    for step in trajectory.get("plan", {}).get("high_pddl", []):
        action = step["planner_action"]
        if action.get("action") != "PickupObject" or not action.get("coordinateReceptacleObjectId"):
            continue
        kind, box = action["coordinateObjectId"]
        if kind in picked:
            continue
        picked.add(kind)
        x, z, y = box[0] / 4, box[2] / 4, box[4] / 4
        mine = [pose for pose in poses if pose["objectName"].split("_")[0] == kind]
        if mine:
            pose = min(mine, key=lambda p: (p["position"]["x"] - x) ** 2 + (p["position"]["y"] - y) ** 2 + (p["position"]["z"] - z) ** 2)
            yield action["coordinateReceptacleObjectId"][0], {"object": kind, "position": pose["position"], "rotation": pose["rotation"]}


def trajectory_types(trajectory: dict) -> set[str]:
    """Object types a trajectory shows: its scene's movable objects and what its plan acts on."""
    found = {pose["objectName"].split("_")[0] for pose in trajectory["scene"].get("object_poses", [])}
    plan = trajectory.get("plan", {})
    actions = [a["api_action"] for a in plan.get("low_actions", [])] + [a["planner_action"] for a in plan.get("high_pddl", [])]
    for action in actions:
        found |= {action[key].split("|")[0] for key in ("objectId", "receptacleObjectId") if isinstance(action.get(key), str)}
        found |= {action[key][0] for key in ("coordinateObjectId", "coordinateReceptacleObjectId") if isinstance(action.get(key), list)}
    return found


def build(tree: GitTree | FolderTree, source: str, rev: str | None) -> dict:
    types = json.loads(TYPES.read_text(encoding="utf-8"))["types"]
    known, fixed = set(types), {name for name, props in types.items() if "pickupable" not in props}
    layouts = {int(m.group(2)): p for p in tree.paths if (m := LAYOUT.search(p))}
    scenes = sorted(n for low, high in ROOM_TYPES.values() for n in range(low, high + 1))
    missing = [n for n in scenes if n not in layouts]
    if missing:
        raise SystemExit(f"{source}: no gen/layouts/FloorPlan<N>-objects.json for scenes {missing}")
    listed: dict[int, set[str]] = {}
    unmapped: set[str] = set()
    for path, data in tree.read_all([layouts[n] for n in scenes]):
        number = int(LAYOUT.search(path).group(2))  # type: ignore[union-attr]
        names = {RENAMED.get(t, t) for t in json.loads(data)}
        unmapped |= names - known
        listed[number] = names & known

    ids: dict[int, set[str]] = defaultdict(set)
    openables = {int(m.group(2)): p for p in tree.paths if (m := OPENABLE.search(p))}
    for path, data in tree.read_all([openables[n] for n in scenes if n in openables]):
        ids[int(OPENABLE.search(path).group(2))] |= set(json.loads(data))  # type: ignore[union-attr]
    shown: dict[int, Counter[str]] = defaultdict(Counter)
    inside: dict[int, dict[str, dict]] = defaultdict(dict)  # scene -> receptacle type -> a pose an object started at in it
    trajectories: Counter[int] = Counter()
    paths = [p for p in tree.paths if TRAJECTORY.search(p)]
    for count, (path, data) in enumerate(tree.read_all(sorted(paths)), start=1):
        trajectory = json.loads(data)
        number = int(trajectory["scene"]["floor_plan"].removeprefix("FloorPlan"))
        trajectories[number] += 1
        ids[number] |= trajectory_ids(trajectory)
        for receptacle, pose in start_poses(trajectory):
            inside[number].setdefault(RENAMED.get(receptacle, receptacle), {**pose, "trajectory": path.split("json_2.1.0/")[-1]})
        for name in {RENAMED.get(t, t) for t in trajectory_types(trajectory)} & known:
            shown[number][name] += 1
            if name not in listed[number]:
                raise SystemExit(f"{path}: shows a {name}, which {layouts[number]} does not list")
        if count % 1000 == 0:
            print(f"{count} of {len(paths)} trajectories read", file=sys.stderr)

    by_room: dict[str, set[str]] = defaultdict(set)
    for number in scenes:
        by_room[room_type(number)] |= listed[number]
    return {
        "about": (
            "Which AI2-THOR object types each iTHOR scene holds, and how that is known. A type is held by a scene "
            "when ALFRED's list of the objects present at the scene's load names it (AI2-THOR 2.1.0); the number beside "
            "it counts the scene's ALFRED trajectories that show it (among its movable objects or the objects its plan "
            "acts on). A type no scene of a room type lists is known not to be held by any scene of that room type. "
            "Anything else is unknown: SPOC runs AI2-THOR 5.0, whose scenes gained objects (SPOC's own files use a "
            "ShowerHead in FloorPlan411 and FloorPlan419, which 2.1.0 did not have), and types newer than 2.1.0 are "
            "not covered."
        ),
        "provenance": {
            "derived_by": "scripts/build_scene_catalogue.py",
            "source": "ALFRED (Shridhar et al., CVPR 2020), github.com/askforalfred/alfred",
            "revision": rev,
            "files": (
                "gen/layouts/FloorPlan<N>-objects.json (one per scene), gen/layouts/FloorPlan<N>-openable.json, "
                "data/json_2.1.0/**/traj_data.json"
            ),
            "object_ids": (
                "object_ids: per type, the AI2-THOR object ids (Type|x|y|z, set at the scene's load) that ALFRED names in the "
                "scene: the receptacles of FloorPlan<N>-openable.json and the objects its trajectories' plans act on "
                "(plan.high_pddl planner_action and plan.low_actions api_action objectId, receptacleObjectId), for the types "
                "that cannot be picked up only: a movable object's id follows where ALFRED placed it, so it differs from one "
                "trajectory to the next. They are some of the scene's objects, not a count of them: how many objects of a "
                "type a scene holds is not known."
            ),
            "start_poses": (
                "start_poses: per receptacle type, a pose (position, rotation) at which an object started in or on it in "
                "one of the scene's trajectories (the first, in path order, whose plan first picks an object up from it): "
                "the object's scene.object_poses entry nearest the position its PickupObject gives."
            ),
            "trajectories": sum(trajectories.values()),
            "renamed": RENAMED,
            "not_ai2thor_types": sorted(unmapped),
            "licence": "MIT",
            "copyright": "Copyright (c) 2019 ALFRED",
            "licence_text": (REPO / "sources" / "samples" / "alfred" / "LICENSE").read_text(encoding="utf-8"),
        },
        "room_types": {
            name: {"scenes": [f"FloorPlan{n}" for n in range(low, high + 1)], "types": sorted(by_room[name])}
            for name, (low, high) in ROOM_TYPES.items()
        },
        "scenes": {
            f"FloorPlan{n}": {
                "room_type": room_type(n),
                "trajectories": trajectories[n],
                "held": {name: shown[n][name] for name in sorted(listed[n])},
                "start_poses": dict(sorted(inside[n].items())),
                "object_ids": {
                    name: sorted(i for i in ids[n] if RENAMED.get(id_type(i), id_type(i)) == name)
                    for name in sorted({RENAMED.get(id_type(i), id_type(i)) for i in ids[n]} & listed[n] & fixed)
                },
            }
            for n in scenes
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("alfred", type=Path, help="ALFRED git repository or folder")
    parser.add_argument("--rev", default=DEFAULT_REV, help=f"revision of a git repository (default {DEFAULT_REV[:8]})")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    tree = open_tree(args.alfred, args.rev)
    catalogue = build(tree, str(args.alfred), args.rev if isinstance(tree, GitTree) else None)
    args.out.write_text(json.dumps(catalogue, indent=1) + "\n", encoding="utf-8")
    held = sum(len(s["held"]) for s in catalogue["scenes"].values())
    print(f"{args.out}: {len(catalogue['scenes'])} scenes, {held} held types, {catalogue['provenance']['trajectories']} trajectories")


if __name__ == "__main__":
    main()
