"""The scene catalogue: which AI2-THOR object types each iTHOR scene holds and how that is known,
shipped as data (pipeline/spoc/scenes.json) and derived by scripts/build_scene_catalogue.py, here
run on a small ALFRED-shaped folder and git repository."""

from __future__ import annotations

import importlib.util
import json
import subprocess

import pytest
from tests_paths import REPO

from safeforge.spoc import scene_catalogue, type_states

KITCHENS = [f"FloorPlan{n}" for n in range(1, 31)]


def test_the_shipped_catalogue_says_where_it_comes_from():
    catalogue = scene_catalogue()
    provenance = catalogue.provenance
    assert provenance["revision"] == "495d2c39ee3db399696a5c58512faf3c8d8f122c"
    assert provenance["trajectories"] == 8051
    assert (provenance["licence"], provenance["copyright"]) == ("MIT", "Copyright (c) 2019 ALFRED")
    assert "Permission is hereby granted" in provenance["licence_text"]
    assert provenance["derived_by"] == "scripts/build_scene_catalogue.py"
    assert len(catalogue.scenes) == 120
    data = json.loads((REPO / "pipeline" / "spoc" / "scenes.json").read_text())
    for room, entry in data["room_types"].items():  # a room type holds what its scenes hold
        held = set().union(*(data["scenes"][s]["held"] for s in entry["scenes"]))
        assert sorted(held) == entry["types"], room
        assert all(data["scenes"][s]["room_type"] == room for s in entry["scenes"])


@pytest.mark.parametrize(
    "scene, type_name, status, reason",
    [
        ("FloorPlan1", "Toaster", "held", "ALFRED's list of FloorPlan1's objects names a Toaster"),
        ("FloorPlan1", "AppleSliced", "held", "names an Apple, shown by"),  # present where the apple is
        ("FloorPlan401", "Fridge", "not_held", "FloorPlan401 is a bathroom, and no bathroom of the scene catalogue holds a Fridge"),
        ("FloorPlan411", "ShowerHead", "unknown", "AI2-THOR 2.1.0's FloorPlan411 had no ShowerHead (other bathrooms do)"),
        ("FloorPlan1", "Dumbbell", "unknown", "does not cover the type Dumbbell"),
    ],
)
def test_presence_says_how_it_is_known(scene, type_name, status, reason):
    presence = scene_catalogue().presence(scene, type_name)
    assert presence.status == status
    assert reason in presence.reason


def test_which_scenes_hold_a_task_s_objects():
    catalogue = scene_catalogue()
    assert catalogue.scenes_holding(["Toaster", "Microwave", "Fridge"]) == KITCHENS
    assert catalogue.scenes_holding(["Toilet", "Fridge"]) == []
    assert catalogue.scenes_holding(["Toilet", "ShowerHead"], room_type="Bathroom") == [
        name for name in catalogue.scenes_holding(["ShowerHead"]) if name.startswith("FloorPlan4")
    ]
    assert "FloorPlan305" in catalogue.scenes_holding(["Box", "CellPhone", "Desk"])
    with pytest.raises(KeyError, match="'FloorPlan99' is not an iTHOR scene"):
        catalogue.scene("FloorPlan99")


def test_the_types_and_states_of_a_scene():
    scene = scene_catalogue().scene("FloorPlan1")
    assert (scene.room_type, scene.room) == ("Kitchen", "kitchen")
    assert {"Toaster", "Fridge", "Mug", "Faucet"} <= set(scene.object_types())
    states = scene.states()
    assert states["Fridge"] == ["isOpen", "child", "temperature"]
    assert (
        states["Mug"] == type_states("Mug") == ["isDirty", "isFilledWithLiquid", "isBroken", "fillLiquid", "child", "parent", "temperature"]
    )
    assert states["Apple"] == ["sliced", "parent", "temperature"]


def _script():
    spec = importlib.util.spec_from_file_location("build_scene_catalogue", REPO / "scripts" / "build_scene_catalogue.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _alfred(root):
    """An ALFRED-shaped folder: every scene's object list, and two trajectories of FloorPlan1."""
    layouts = root / "gen" / "layouts"
    layouts.mkdir(parents=True)
    for number in [*range(1, 31), *range(201, 231), *range(301, 331), *range(401, 431)]:
        objects = {1: ["Apple", "Glassbottle", "Fridge", "Lamp"], 2: ["Apple", "Kettle"]}.get(
            number, ["Toilet" if number > 400 else "Chair"]
        )
        (layouts / f"FloorPlan{number}-objects.json").write_text(json.dumps(objects))
    for trial, poses, acted in (("a", ["Apple_1f2e"], "Fridge|+01|+00|+01"), ("b", ["Apple_1f2e", "Glassbottle_9a"], "Apple|+00|+01|+00")):
        folder = root / "data" / "json_2.1.0" / "train" / "pick-Apple-None-Fridge-1" / f"trial_{trial}"
        folder.mkdir(parents=True)
        at = [
            {"objectName": n, "position": {"x": i, "y": 1.0, "z": -i}, "rotation": {"x": 0, "y": 90, "z": 0}} for i, n in enumerate(poses)
        ]
        pickup = {  # the apple, first picked up from the fridge (ALFRED writes positions four times larger)
            "planner_action": {
                "action": "PickupObject",
                "coordinateObjectId": ["Apple", [0, 0, 0, 0, 4, 4]],
                "coordinateReceptacleObjectId": ["Fridge", [1]],
            }
        }
        trajectory = {
            "scene": {"floor_plan": "FloorPlan1", "object_poses": at},
            "plan": {
                "low_actions": [{"api_action": {"action": "OpenObject", "objectId": acted}}],
                "high_pddl": [pickup] if trial == "a" else [],
            },
        }
        (folder / "traj_data.json").write_text(json.dumps(trajectory))


def test_the_script_derives_the_catalogue_from_a_folder_or_a_git_repository(tmp_path):
    script = _script()
    _alfred(tmp_path / "alfred")
    built = script.build(script.open_tree(tmp_path / "alfred", "HEAD"), "alfred", None)
    first = built["scenes"]["FloorPlan1"]
    assert first == {
        "room_type": "Kitchen",
        "trajectories": 2,
        "held": {"Apple": 2, "Bottle": 1, "Fridge": 1},
        "object_ids": {"Fridge": ["Fridge|+01|+00|+01"]},  # an apple's id follows where ALFRED placed it: not kept
        "start_poses": {  # the first trajectory, in path order, that picks an object up from a fridge
            "Fridge": {
                "object": "Apple",
                "position": {"x": 0, "y": 1.0, "z": 0},
                "rotation": {"x": 0, "y": 90, "z": 0},
                "trajectory": "train/pick-Apple-None-Fridge-1/trial_a/traj_data.json",
            }
        },
    }
    assert built["provenance"]["not_ai2thor_types"] == ["Lamp"]  # Glassbottle is AI2-THOR's Bottle
    assert built["room_types"]["Kitchen"]["types"] == ["Apple", "Bottle", "Chair", "Fridge", "Kettle"]
    assert built["scenes"]["FloorPlan2"]["held"] == {"Apple": 0, "Kettle": 0}

    subprocess.run(["git", "init", "-q", str(tmp_path / "alfred")], check=True)
    git = ["git", "-C", str(tmp_path / "alfred"), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "data"], check=True)
    rev = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    from_git = script.build(script.open_tree(tmp_path / "alfred", rev), "alfred", rev)
    assert from_git["scenes"] == built["scenes"]
    assert from_git["provenance"]["revision"] == rev


def test_the_script_refuses_a_trajectory_showing_what_its_scene_lacks(tmp_path):
    script = _script()
    _alfred(tmp_path / "alfred")
    (tmp_path / "alfred" / "gen" / "layouts" / "FloorPlan1-objects.json").write_text(json.dumps(["Apple"]))
    with pytest.raises(SystemExit, match="shows a Fridge, which .*FloorPlan1-objects.json does not list"):
        script.build(script.open_tree(tmp_path / "alfred", "HEAD"), "alfred", None)


# The first rows of AI2-THOR's object-type table (ai2thor.allenai.org/ithor/documentation/objects/
# object-types): in how many scenes of each room type a type appears. (BathtubBasin, 19 of 30
# bathrooms there, is in 20 of ALFRED's: the scenes changed a little after AI2-THOR 2.1.0.)
DOCUMENTED = {
    "AlarmClock": {"Bedroom": 30},
    "Apple": {"Kitchen": 30},
    "ArmChair": {"LivingRoom": 27, "Bedroom": 6},
    "BaseballBat": {"Bedroom": 13},
    "BasketBall": {"Bedroom": 11},
    "Bathtub": {"Bathroom": 21},
    "Bed": {"Bedroom": 30},
}


@pytest.mark.parametrize("type_name, rooms", DOCUMENTED.items(), ids=list(DOCUMENTED))
def test_room_types_agree_with_ai2thor_s_documentation(type_name, rooms):
    catalogue = scene_catalogue()
    found = {}
    for scene in catalogue.scenes.values():
        if scene.presence(type_name).status == "held":
            found[scene.room_type] = found.get(scene.room_type, 0) + 1
    assert found == rooms
    assert all(catalogue.presence(s, type_name).status == "not_held" for s in catalogue.scenes if catalogue.scene(s).room_type not in rooms)
