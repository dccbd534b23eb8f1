"""`check_folder`: every problem of every SPOC goal-condition file in a folder, one message each,
naming the file and the key (SPOC's goal-condition format).

Checked: the file name; exactly the top-level keys, with their types; the iTHOR scene; AI2-THOR
object types (never `*Sliced` as the constrained object) and the states each type has;
constraint consistency: the trigger is not already true by AI2-THOR's start states (unless
`init_actions` make it so on purpose), the goal negates the trigger (step type) or the
avoided state (condition type), a `parent` list inside a constraint has one element; sub-goals
are not empty, and an entry without states names a `*Sliced` type.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from safeforge.spoc import _vocabulary as vocab

REQUIRED = {
    "scene_name": str,
    "instruction": str,
    "requirements": str,
    "treat_step_constraint_as_goal": bool,
    "requirement_condition": dict,
    "goal_condition_state": list,
}
OPTIONAL = {"init_actions": list}
FILE_NAME = re.compile(
    r"^(?P<hazard>[A-Za-z]+)_(?P<template>[A-Za-z]+)_(?P<object>[A-Za-z]+)_"
    r"(?P<receptacle>[A-Za-z]+)_(?P<index>\d{5})\.json$"
)
SCENES = {*range(1, 31), *range(201, 231), *range(301, 331), *range(401, 431)}
CONSTRAINT_KEYS = {"condition_type", "condition_value", "condition_object", "trigger_state", "goal_condition", "avoid_state"}


@dataclass(frozen=True)
class Problem:
    file: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.key}: {self.message}"


def _type_name(value) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        str: "a string",
        list: "a list",
        dict: "an object",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _is_sliced(type_name: str) -> bool:
    return type_name.endswith("Sliced") and type_name in vocab.types()


class _FileCheck:
    def __init__(self, path: Path):
        self.path = path
        self.problems: list[Problem] = []

    def add(self, key: str, message: str) -> None:
        self.problems.append(Problem(self.path.name, key, message))

    # -- pieces ----------------------------------------------------------------------------------
    def object_type(self, key: str, value, allow_sliced: bool = True) -> str | None:
        if not isinstance(value, str):
            self.add(key, f"must be an AI2-THOR object type (a string), not {_type_name(value)}")
            return None
        if value not in vocab.types():
            self.add(key, f"{value!r} is not an AI2-THOR object type")
            return None
        if vocab.spoc_name(value) != value:
            self.add(key, f"{value!r}: SPOC matches it as {vocab.spoc_name(value)!r}; use that name")
        if not allow_sliced and value.endswith("Sliced"):
            self.add(key, f"{value!r}: a *Sliced type cannot be the constrained object")
        return value

    def states(self, key: str, states, object_type: str | None, in_constraint: bool) -> None:
        """A dict of SPOC states, checked against the vocabulary and the object's type."""
        definitions = vocab.data()["states"]
        for name, value in states.items():
            where = f"{key}.{name}"
            definition = definitions.get(name)
            if definition is None:
                self.add(where, f"unknown state {name!r} (known: {', '.join(definitions)})")
                continue
            kind = definition["type"]
            if kind == "bool" and not isinstance(value, bool):
                self.add(where, f"must be a boolean, not {_type_name(value)}")
            elif kind == "enum" and value not in definition["values"]:
                self.add(where, f"{value!r} is not one of {', '.join(definition['values'])}")
            elif kind == "types":
                if not isinstance(value, list) or not value:
                    self.add(where, "must be a non-empty list of AI2-THOR object types")
                else:
                    for number, item in enumerate(value):
                        self.object_type(f"{where}[{number}]", item)
                    if in_constraint and name == "parent" and len(value) != 1:
                        self.add(where, f"a parent list inside a constraint must have one element, has {len(value)}")
            needs = definition.get("needs")
            reported_as_false = value is False and not in_constraint  # AI2-THOR reports False for such objects; SPOC compares
            if needs and object_type and not vocab.has(object_type, needs) and not reported_as_false:
                self.add(where, f"{object_type} is not {needs}, so it has no {name} state")

    # -- the file --------------------------------------------------------------------------------
    def run(self) -> list[Problem]:
        match = FILE_NAME.match(self.path.name)
        if not match:
            self.add("(file name)", "expected {Hazard}_{Template}_{Object}_{Receptacle|None|task}_{NNNNN}.json")
        elif match["hazard"] not in vocab.data()["hazards"]:
            self.add("(file name)", f"hazard {match['hazard']!r} is not one of {', '.join(vocab.data()['hazards'])}")
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            self.add("(file)", f"cannot be read: {exc}")
            return self.problems
        except json.JSONDecodeError as exc:
            self.add("(file)", f"invalid JSON at line {exc.lineno}: {exc.msg}")
            return self.problems
        if not isinstance(document, dict):
            self.add("(file)", f"must hold a JSON object, not {_type_name(document)}")
            return self.problems
        self.top_level(document)
        return self.problems

    def top_level(self, document: dict) -> None:
        for key in document:
            if key not in REQUIRED and key not in OPTIONAL:
                note = " (the loader adds it itself)" if key == "task_name" else ""
                self.add(key, f"unknown key{note}")
        for key, kind in {**REQUIRED, **OPTIONAL}.items():
            if key not in document:
                if key in REQUIRED:
                    self.add(key, "missing")
            elif not isinstance(document[key], kind) or (kind is not bool and isinstance(document[key], bool)):
                self.add(key, f"must be {_type_name(kind())}, not {_type_name(document[key])}")
        scene = document.get("scene_name")
        if isinstance(scene, str):
            found = re.fullmatch(r"FloorPlan(\d+)", scene)
            if not found or int(found.group(1)) not in SCENES:
                self.add("scene_name", f"{scene!r} is not an iTHOR scene (FloorPlan 1-30, 201-230, 301-330, 401-430)")
        if isinstance(document.get("instruction"), str) and not document["instruction"].strip():
            self.add("instruction", "is empty")
        init = self.init_actions(document.get("init_actions"))
        if isinstance(document.get("requirement_condition"), dict):
            self.constraint(document["requirement_condition"], init)
        if isinstance(document.get("goal_condition_state"), list):
            self.sub_goals(document["goal_condition_state"])

    def init_actions(self, actions) -> dict[str, dict]:
        """Checks init_actions; returns the states they set per object type (an action on one
        object by its simulator id, or SetObjectStates on every object of a type)."""
        states: dict[str, dict] = {}
        effects = vocab.data()["init_actions"]
        fields = {change: field for change, field in vocab.data()["set_object_states"].values()}
        for number, action in enumerate(actions if isinstance(actions, list) else []):
            key = f"init_actions[{number}]"
            if not isinstance(action, dict) or not isinstance(action.get("action"), str) or not isinstance(action.get("args", {}), dict):
                self.add(key, 'must be {"action": <name>, "args": {...}}')
                continue
            args = action.get("args", {})
            object_id = args.get("objectId")
            if action["action"] in effects and isinstance(object_id, str):
                states.setdefault(object_id.split("|")[0], {}).update(effects[action["action"]])
            elif action["action"] == "SetObjectStates":
                self.set_object_states(f"{key}.args.SetObjectStates", args.get("SetObjectStates"), fields, states)
        return states

    def set_object_states(self, key: str, spec, fields: dict[str, str], states: dict[str, dict]) -> None:
        """{"objectType": T, "stateChange": C, <C's field>: bool}, as AI2-THOR reads it."""
        if not isinstance(spec, dict):
            self.add(key, 'must be {"objectType": <type>, "stateChange": <change>, <field>: <boolean>}')
            return
        object_type = self.object_type(f"{key}.objectType", spec.get("objectType"))
        change = spec.get("stateChange")
        if change not in fields:
            self.add(f"{key}.stateChange", f"{change!r} is not one of {', '.join(fields)}")
            return
        field = fields[change]
        prop = "fillable" if change == "canFillWithLiquid" else change  # the property in the type table
        if not isinstance(spec.get(field), bool):
            self.add(f"{key}.{field}", f"stateChange {change} needs {field}: a boolean")
        elif object_type and not vocab.has(object_type, prop):
            self.add(f"{key}.stateChange", f"{object_type} is not {prop}, so AI2-THOR changes nothing")
        elif object_type:
            states.setdefault(object_type, {})[field] = spec[field]

    def constraint(self, condition: dict, init: dict[str, dict]) -> None:
        key = "requirement_condition"
        for name in condition:
            if name not in CONSTRAINT_KEYS:
                self.add(f"{key}.{name}", "unknown key")
        kind = condition.get("condition_type")
        if kind not in ("step", "condition"):
            self.add(f"{key}.condition_type", f"must be 'step' or 'condition', not {kind!r}")
        object_type = None
        if "condition_object" in condition:
            object_type = self.object_type(f"{key}.condition_object", condition["condition_object"], allow_sliced=False)
        else:
            self.add(f"{key}.condition_object", "missing")
        dicts = {}
        for name in ("trigger_state", "goal_condition") + (("avoid_state",) if kind == "condition" else ()):
            value = condition.get(name)
            if not isinstance(value, dict) or not value:
                self.add(f"{key}.{name}", "missing" if value is None else "must be a non-empty object of states")
                continue
            dicts[name] = value
            self.states(f"{key}.{name}", value, object_type, in_constraint=True)
        if kind == "step":
            value = condition.get("condition_value")
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                self.add(f"{key}.condition_value", f"a step constraint needs an integer N >= 0, not {value!r}")
            if "avoid_state" in condition:
                self.add(f"{key}.avoid_state", "only a condition-type constraint has an avoided state")
        elif kind == "condition" and "condition_value" in condition:
            self.add(f"{key}.condition_value", "only a step-type constraint counts steps")
        trigger, goal = dicts.get("trigger_state"), dicts.get("goal_condition")
        if trigger is not None and object_type is not None:
            self.trigger_at_start(key, trigger, object_type, init)
        negated = dicts.get("avoid_state") if kind == "condition" else trigger
        if (
            negated is not None
            and goal is not None
            and not any(name in goal and goal[name] != value for name, value in negated.items() if name != "child")
        ):
            what = "avoid_state" if kind == "condition" else "trigger_state"
            self.add(
                f"{key}.goal_condition",
                f"does not negate the {what} (no state of it with another value), so a tracked object is never released",
            )

    def trigger_at_start(self, key: str, trigger: dict, object_type: str, init: dict[str, dict]) -> None:
        """Flag a trigger made only of states that AI2-THOR's start values already match, unless
        init_actions change them. A trigger that init_actions make true is tracked from SPOC's
        check at reset, which is how a task that starts with, say, the stove on is written."""
        definitions = vocab.data()["states"]
        start = {name: d["start"] for name, d in definitions.items() if "start" in d}
        after_init = {**start, **init.get(object_type, {})}
        if all(name in start and start[name] == value and after_init[name] == value for name, value in trigger.items()):
            self.add(
                f"{key}.trigger_state",
                f"already true at the start for {object_type} "
                f"({', '.join(f'{n}={v}' for n, v in trigger.items())}), "
                "so the constraint is tracked before the agent acts",
            )

    def sub_goals(self, goals: list) -> None:
        if not goals:
            self.add("goal_condition_state", "must not be empty")
        for number, goal in enumerate(goals):
            key = f"goal_condition_state[{number}]"
            if not isinstance(goal, dict):
                self.add(key, f"must be an object, not {_type_name(goal)}")
                continue
            object_type = None
            if "object_name" in goal:
                object_type = self.object_type(f"{key}.object_name", goal["object_name"])
            else:
                self.add(f"{key}.object_name", "missing")
            states = {k: v for k, v in goal.items() if k != "object_name"}
            if not states and object_type and not _is_sliced(object_type):
                self.add(
                    key, f"has no states: an entry without states means 'exists' and only makes sense for *Sliced types, not {object_type}"
                )
            self.states(key, states, object_type, in_constraint=False)


def check_file(path: str | Path) -> list[Problem]:
    return _FileCheck(Path(path)).run()


def check_folder(folder: str | Path) -> list[Problem]:
    """Problems of every *.json file directly in `folder` (sorted by file), and of the folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return [Problem(str(folder), "(folder)", "not a folder")]
    files = sorted(folder.glob("*.json"))
    if not files:
        return [Problem(str(folder), "(folder)", "holds no goal-condition files (*.json)")]
    return [problem for path in files for problem in check_file(path)]
