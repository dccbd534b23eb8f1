"""`spoc check` is SPOC's loader plus the format's rules: SPOC's own 25 files pass; any *.json name
loads; a key SPOC ignores is a warning; everything SPOC stops on is an error naming the file and the
key (each such variant is also run through SPOC's reads, spoc_rules.py, which must fail on it);
an object type the scene is known not to hold is an error."""

from __future__ import annotations

import copy
import json

import pytest
from spoc_rules import load_dataset, read_like_spoc
from tests_paths import SPOC_DATASET

from safeforge.cli.main import main
from safeforge.spoc import check_file, check_folder

EXAMPLE_NAME = "Drop_CloseWhileTransport_CellPhone_Box_00000.json"
EXAMPLE = json.loads((SPOC_DATASET / EXAMPLE_NAME).read_text())  # SPOC's own file, FloorPlan305 (a bedroom)


def _write(folder, document, name=EXAMPLE_NAME):
    path = folder / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def _mutated(change):
    document = copy.deepcopy(EXAMPLE)
    change(document)
    return document


def _set(path, value):
    def change(document):
        *parents, last = path
        target = document
        for key in parents:
            target = target[key]
        target[last] = value

    return change


def _drop(*path):
    def change(document):
        *parents, last = path
        target = document
        for key in parents:
            target = target[key]
        del target[last]

    return change


def test_spoc_s_own_files_load_and_pass():
    problems = check_folder(SPOC_DATASET)
    assert [p for p in problems if p.is_error] == []
    assert len(list(SPOC_DATASET.glob("*.json"))) == 25
    # AI2-THOR 2.1.0's FloorPlan411 and FloorPlan419 had no ShowerHead; SPOC's 5.0 scenes do
    assert [(p.file, p.key) for p in problems] == [
        ("Water_TurnOffSteps_ShowerHead_task_00000.json", "requirement_condition.condition_object"),
        ("Water_TurnOffSteps_ShowerHead_task_00001.json", "requirement_condition.condition_object"),
    ]
    assert all("not known whether" in p.message for p in problems)
    for task in load_dataset(SPOC_DATASET):
        read_like_spoc(task)


# (id, change, [(key, message fragment)]) of what SPOC stops on: each is an error
CRASHES = [
    ("missing key", _drop("requirements"), [("requirements", "missing (SPOC stops with KeyError: 'requirements')")]),
    (
        "init action without args",
        _set(["init_actions", 0], {"action": "CloseObject"}),
        [("init_actions[0].args", "missing (SPOC stops with KeyError: 'args')")],
    ),
    (
        "init action args not an object",
        _set(["init_actions", 0, "args"], ["Box"]),
        [("init_actions[0].args", "must be an object, not a list")],
    ),
    ("init actions not a list", _set(["init_actions"], {"action": "CloseObject"}), [("init_actions", "must be a list, not an object")]),
    (
        "step constraint without its window",
        _drop("requirement_condition", "condition_value"),
        [("requirement_condition.condition_value", "missing (SPOC stops with KeyError: 'condition_value')")],
    ),
    (
        "window not a number",
        _set(["requirement_condition", "condition_value"], "1"),
        [("requirement_condition.condition_value", "a step constraint needs an integer N >= 0, not '1'")],
    ),
    (
        "condition type without avoided state",
        _set(["requirement_condition", "condition_type"], "condition"),
        [("requirement_condition.condition_value", "SPOC ignores it"), ("requirement_condition.avoid_state", "missing (SPOC stops")],
    ),
    (
        "state AI2-THOR's metadata lacks",
        _set(["requirement_condition", "trigger_state", "isClosed"], False),
        [("requirement_condition.trigger_state.isClosed", "SPOC stops with KeyError: 'isClosed'")],
    ),
    (
        "sub-goal key inside a constraint",
        _set(["requirement_condition", "goal_condition", "not_on"], ["Desk"]),
        [("requirement_condition.goal_condition.not_on", "SPOC stops with KeyError: 'not_on'")],
    ),
    (
        "sub-goal without its object",
        _drop("goal_condition_state", 1, "object_name"),
        [("goal_condition_state[1].object_name", "missing (SPOC stops with KeyError: 'object_name')")],
    ),
    (
        "stove burner as cooking appliance",
        _set(["goal_condition_state", 0, "cooking_appliance"], "StoveBurner"),
        [("goal_condition_state[0].cooking_appliance", "'StoveBurner' is not one of Microwave, Toaster (SPOC's cook check stops")],
    ),
]


@pytest.mark.parametrize("change, expected", [c[1:] for c in CRASHES], ids=[c[0] for c in CRASHES])
def test_what_spoc_stops_on_is_an_error_naming_the_key(tmp_path, change, expected):
    document = _mutated(change)
    problems = check_file(_write(tmp_path, document))
    assert [(p.key, p.severity) for p in problems if p.is_error] == [(k, "error") for k, _ in expected if "ignores" not in _]
    for (key, fragment), problem in zip(expected, problems, strict=True):
        assert (problem.key, problem.file) == (key, EXAMPLE_NAME)
        assert fragment in problem.message
    with pytest.raises((KeyError, TypeError, ValueError, NameError)):
        read_like_spoc(load_dataset(tmp_path)[0])


# (id, change, [(key, message fragment)]) of what breaks the format's rules
BROKEN = [
    ("wrong type", _set(["treat_step_constraint_as_goal"], "yes"), [("treat_step_constraint_as_goal", "must be a boolean, not a string")]),
    (
        "unknown object type",
        _set(["requirement_condition", "condition_object"], "Oven"),
        [("requirement_condition.condition_object", "'Oven' is not an AI2-THOR object type")],
    ),
    (
        "type the scene does not hold",
        _set(["goal_condition_state", 1, "object_name"], "Toilet"),
        [("goal_condition_state[1].object_name", "FloorPlan305 holds no Toilet: FloorPlan305 is a bedroom, and no bedroom")],
    ),
    (
        "sliced condition object",
        _set(["requirement_condition", "condition_object"], "AppleSliced"),
        [
            ("requirement_condition.condition_object", "a *Sliced type cannot be the constrained object"),
            ("requirement_condition.trigger_state.isOpen", "AppleSliced is not openable"),
            ("requirement_condition.trigger_state.child", "AppleSliced is not receptacle"),
            ("requirement_condition.goal_condition.isOpen", "AppleSliced is not openable"),
            ("requirement_condition.condition_object", "FloorPlan305 holds no AppleSliced"),
        ],
    ),
    ("empty sub-goals", _set(["goal_condition_state"], []), [("goal_condition_state", "must not be empty")]),
    (
        "sub-goal without states",
        _set(["goal_condition_state", 1], {"object_name": "Desk"}),
        [("goal_condition_state[1]", "only makes sense for *Sliced types, not Desk")],
    ),
    (
        "trigger true at start",
        _set(["requirement_condition", "trigger_state"], {"isOpen": False}),
        [
            ("requirement_condition.trigger_state", "already true at the start for Box (isOpen=False)"),
            ("requirement_condition.goal_condition", "does not negate the trigger_state"),
        ],
    ),
    (
        "goal not negating trigger",
        _set(["requirement_condition", "goal_condition"], {"isOpen": True}),
        [("requirement_condition.goal_condition", "does not negate the trigger_state")],
    ),
    (
        "parent list longer than one",
        _set(["requirement_condition", "trigger_state"], {"isOpen": True, "parent": ["Desk", "Shelf"]}),
        [("requirement_condition.trigger_state.parent", "must have one element, has 2")],
    ),
    (
        "negative step count",
        _set(["requirement_condition", "condition_value"], -1),
        [("requirement_condition.condition_value", "integer N >= 0, not -1")],
    ),
    (
        "state the type lacks",
        _set(["goal_condition_state", 1, "isToggled"], True),
        [("goal_condition_state[1].isToggled", "Desk is not toggleable")],
    ),
    (
        "bad enum value",
        _set(["goal_condition_state", 0, "temperature"], "Warm"),
        [("goal_condition_state[0].temperature", "'Warm' is not one of Hot, Cold, RoomTemp")],
    ),
    ("not an iTHOR scene", _set(["scene_name"], "FloorPlan99"), [("scene_name", "'FloorPlan99' is not an iTHOR scene")]),
    (
        "basin named as in AI2-THOR",
        _set(["goal_condition_state", 1, "object_name"], "SinkBasin"),
        [
            ("goal_condition_state[1].object_name", "SPOC matches it as 'Sink'"),
            ("goal_condition_state[1].object_name", "FloorPlan305 holds no SinkBasin"),
        ],
    ),
]


@pytest.mark.parametrize("change, expected", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_each_kind_of_broken_file_is_named(tmp_path, change, expected):
    problems = check_file(_write(tmp_path, _mutated(change)))
    assert [(p.key, p.severity) for p in problems] == [(key, "error") for key, _ in expected]
    for problem, (_, fragment) in zip(problems, expected, strict=True):
        assert fragment in problem.message
        assert problem.file == EXAMPLE_NAME


WARNED = [
    ("a key SPOC ignores", _set(["source"], "mine"), ("source", "unknown key: SPOC ignores it")),
    ("the loader's own key", _set(["task_name"], "x"), ("task_name", "SPOC's loader overwrites it with the file name")),
    (
        "a constraint key SPOC ignores",
        _set(["requirement_condition", "avoid_state"], {"isDirty": True}),
        ("requirement_condition.avoid_state", "SPOC ignores it in a step-type constraint"),
    ),
    (
        "a type the catalogue cannot place",
        lambda d: d["goal_condition_state"].append({"object_name": "Dumbbell", "parent": ["Bed"]}),  # newer than AI2-THOR 2.1.0
        ("goal_condition_state[2].object_name", "not known whether FloorPlan305 holds a Dumbbell"),
    ),
]


@pytest.mark.parametrize("change, expected", [w[1:] for w in WARNED], ids=[w[0] for w in WARNED])
def test_what_spoc_accepts_but_is_likely_a_mistake_is_a_warning(tmp_path, change, expected):
    document = _mutated(change)
    assert [(p.key, p.severity) for p in check_file(_write(tmp_path, document))] == [(expected[0], "warning")]
    assert expected[1] in check_file(_write(tmp_path, document))[0].message
    read_like_spoc(load_dataset(tmp_path)[0])  # SPOC runs it


def _set_states(object_type, change, **fields):
    return {"action": "SetObjectStates", "args": {"SetObjectStates": {"objectType": object_type, "stateChange": change, **fields}}}


MICROWAVE_ON = {
    "condition_type": "step",
    "condition_value": 2,
    "condition_object": "Microwave",
    "trigger_state": {"isToggled": True},
    "goal_condition": {"isToggled": False},
}
KITCHEN_TASK = {
    **{k: v for k, v in EXAMPLE.items() if k != "init_actions"},
    "scene_name": "FloorPlan1",
    "requirement_condition": MICROWAVE_ON,
    "goal_condition_state": [{"object_name": "Microwave", "isToggled": False}],
}


@pytest.mark.parametrize(
    "init",
    [
        {"action": "ToggleObjectOn", "args": {"objectId": "Microwave|-01.2|+00.9|-02.0"}},
        _set_states("Microwave", "toggleable", isToggled=True),
    ],
    ids=["by object id", "by type"],
)
def test_a_trigger_that_init_actions_make_true_is_tracked_from_the_reset_check(tmp_path, init):
    document = {**KITCHEN_TASK, "init_actions": [init]}
    assert check_file(_write(tmp_path, document, "Fire_TurnOffSteps_Microwave_None_00000.json")) == []


def test_init_actions_that_undo_a_trigger_true_by_default(tmp_path):
    trigger = _set(["requirement_condition", "trigger_state"], {"isOpen": False})
    goal = _set(["requirement_condition", "goal_condition"], {"isOpen": True})
    document = _mutated(lambda d: (trigger(d), goal(d)))
    document["init_actions"] = []
    flagged = [p.key for p in check_file(_write(tmp_path, document))]
    document["init_actions"] = [_set_states("Box", "openable", isOpen=True)]
    assert flagged == ["requirement_condition.trigger_state"]
    assert check_file(_write(tmp_path, document)) == []


def test_set_object_states_is_checked(tmp_path):
    document = copy.deepcopy(EXAMPLE)
    document["init_actions"] = [
        _set_states("Oven", "openable", isOpen=True),
        _set_states("Box", "meltable", isMelted=True),
        _set_states("Box", "dirtyable", isOpen=True),
        {"action": "SetObjectStates", "args": {"SetObjectStates": "Box"}},
        _set_states("Box", "dirtyable", isDirty=True),
    ]
    problems = [(p.key, p.message) for p in check_file(_write(tmp_path, document))]
    assert problems == [
        ("init_actions[0].args.SetObjectStates.objectType", "'Oven' is not an AI2-THOR object type"),
        (
            "init_actions[1].args.SetObjectStates.stateChange",
            "'meltable' is not one of sliceable, openable, toggleable, dirtyable, cookable, canFillWithLiquid, breakable",
        ),
        ("init_actions[2].args.SetObjectStates.isDirty", "stateChange dirtyable needs isDirty: a boolean"),
        ("init_actions[3].args.SetObjectStates", 'must be {"objectType": <type>, "stateChange": <change>, <field>: <boolean>}'),
        ("init_actions[4].args.SetObjectStates.stateChange", "Box is not dirtyable, so AI2-THOR changes nothing"),
    ]


def test_the_folder_is_read_as_spoc_s_loader_reads_it(tmp_path, capsys):
    _write(tmp_path, EXAMPLE)
    _write(tmp_path, EXAMPLE, "knife_cabinet_task.json")  # SPOC loads any *.json name
    _write(tmp_path, "{not json", "Fire_TurnOffSteps_Faucet_None_00001.json")
    _write(tmp_path, "[1, 2]", "Fire_TurnOffSteps_Faucet_None_00002.json")
    _write(tmp_path, EXAMPLE, "Lava_TurnOffSteps_Faucet_None_00003.json")
    _write(tmp_path, EXAMPLE, "Shouting_TurnOffSteps_Faucet_None_00004.JSON")  # SPOC skips it
    (tmp_path / "notes.txt").write_text("not a task")
    (tmp_path / "archive.json").mkdir()  # SPOC opens it and stops
    problems = [str(p) for p in check_folder(tmp_path)]
    assert problems == [
        "Fire_TurnOffSteps_Faucet_None_00001.json: (file): invalid JSON at line 1: Expecting property name enclosed in double quotes",
        "Fire_TurnOffSteps_Faucet_None_00002.json: (file): must hold a JSON object, not a list (SPOC's loader stops with TypeError)",
        "warning: Lava_TurnOffSteps_Faucet_None_00003.json: (file name): SPOC loads it, but its hazards are Fire, Water, Injury, Drop, "
        "Pollution, not 'Lava'",
        "warning: archive.json: (file name): SPOC loads it, but its own files are named {Hazard}_{Template}_{Object}_{Receptacle}_"
        "{NNNNN}.json",
        "archive.json: (file): is a folder: SPOC's loader opens every *.json entry and stops here (IsADirectoryError)",
        "warning: knife_cabinet_task.json: (file name): SPOC loads it, but its own files are named {Hazard}_{Template}_{Object}_"
        "{Receptacle}_{NNNNN}.json",
        "warning: Shouting_TurnOffSteps_Faucet_None_00004.JSON: (file name): SPOC loads only names ending in .json (the case counts), "
        "so it skips this file",
    ]
    assert main(["spoc", "check", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == problems
    assert "6 file(s) checked, 3 error(s), 4 warning(s)" in captured.err

    warned_only = tmp_path / "warned"
    warned_only.mkdir()
    _write(warned_only, EXAMPLE, "knife_cabinet_task.json")
    assert main(["spoc", "check", str(warned_only)]) == 0
    assert [t["task_name"] for t in load_dataset(warned_only)] == ["knife_cabinet_task.json"]


def test_a_false_state_on_an_object_without_it_passes_as_in_ai2thor(tmp_path):
    # AI2-THOR reports isOpen False for every object, so SPOC runs a sub-goal asking a Pillow to be closed
    document = copy.deepcopy(EXAMPLE)
    document["goal_condition_state"].append({"object_name": "Pillow", "isOpen": False})
    _write(tmp_path, document)
    assert check_folder(tmp_path) == []
