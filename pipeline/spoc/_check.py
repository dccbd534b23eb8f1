"""`check_folder`: SPOC's loader rules and the goal-condition format's rules on every file of a
folder, one problem each, naming the file and the key.

SPOC's loader takes every entry of the folder whose name ends in `.json` and reads it as one JSON
object. An error is what SPOC stops on (a missing key, an init action without "args", a state key
AI2-THOR's object metadata lacks, a cooking appliance the scene does not have) or what breaks the
format's rules (key types, the iTHOR scene, AI2-THOR object types and the states each type has, an
object type the scene is known not to hold, constraint consistency, sub-goals). A warning is what
SPOC accepts but is likely a mistake: a file name off SPOC's convention, a key SPOC ignores, an
object type the scene catalogue cannot place in the scene.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from safeforge.spoc import _vocabulary as vocab
from safeforge.spoc._scenes import article, is_ithor_scene, scene_catalogue

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
STEP_KEYS = ("condition_value", "condition_object", "trigger_state", "goal_condition")  # SPOC reads each
CONDITION_KEYS = ("condition_object", "trigger_state", "goal_condition", "avoid_state")
COOKING_APPLIANCES = ("Microwave", "Toaster")  # SPOC's cook checker also names StoveBurner, but that branch stops with NameError


@dataclass(frozen=True)
class Problem:
    file: str
    key: str
    message: str
    severity: str = "error"  # error | warning

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def __str__(self) -> str:
        return f"{'' if self.is_error else 'warning: '}{self.file}: {self.key}: {self.message}"


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
    def __init__(self, name: str):
        self.name = name
        self.problems: list[Problem] = []
        self.named: list[tuple[str, str]] = []  # (key, object type) the scene must hold

    def add(self, key: str, message: str) -> None:
        self.problems.append(Problem(self.name, key, message))

    def warn(self, key: str, message: str) -> None:
        self.problems.append(Problem(self.name, key, message, "warning"))

    # -- pieces ----------------------------------------------------------------------------------
    def object_type(self, key: str, value, allow_sliced: bool = True, in_scene: bool = True, spoc_naming: bool = True) -> str | None:
        """`spoc_naming`: a name SPOC reads (not one AI2-THOR reads in an init action)."""
        if not isinstance(value, str):
            self.add(key, f"must be an AI2-THOR object type (a string), not {_type_name(value)}")
            return None
        if value not in vocab.types():
            self.add(key, f"{value!r} is not an AI2-THOR object type")
            return None
        if spoc_naming and vocab.spoc_name(value) != value:
            self.add(key, f"{value!r}: SPOC matches it as {vocab.spoc_name(value)!r}; use that name")
        if not allow_sliced and value.endswith("Sliced"):
            self.add(key, f"{value!r}: a *Sliced type cannot be the constrained object")
        if in_scene:
            self.named.append((key, value))
        return value

    def states(self, key: str, states, object_type: str | None, in_constraint: bool) -> None:
        """A dict of SPOC states, checked against the vocabulary and the object's type."""
        definitions = vocab.data()["states"]
        for name, value in states.items():
            where = f"{key}.{name}"
            definition = definitions.get(name)
            if name in vocab.data()["other_metadata"]:
                if not isinstance(value, bool):
                    self.add(where, f"must be a boolean, not {_type_name(value)}")
                continue
            if definition is None or (in_constraint and definition.get("sub_goal_only")):
                reader = "its constraint checker" if in_constraint else "its sub-goal checker"
                self.add(where, f"SPOC stops with KeyError: {name!r} ({reader} looks it up in AI2-THOR's object metadata, which lacks it)")
                continue
            kind = definition["type"]
            if kind == "bool" and not isinstance(value, bool):
                self.add(where, f"must be a boolean, not {_type_name(value)}")
            elif kind == "enum" and value not in definition["values"]:
                crash = " (SPOC's cook check stops with NameError on it)" if (name, value) == ("cooking_appliance", "StoveBurner") else ""
                self.add(where, f"{value!r} is not one of {', '.join(definition['values'])}{crash}")
            elif kind == "types":
                if not isinstance(value, list) or not value:
                    self.add(where, "must be a non-empty list of AI2-THOR object types")
                else:
                    for number, item in enumerate(value):
                        self.object_type(f"{where}[{number}]", item, in_scene=name != "not_on")
                    if in_constraint and name == "parent" and len(value) != 1:
                        self.add(where, f"a parent list inside a constraint must have one element, has {len(value)}")
            needs = definition.get("needs")
            reported_as_false = value is False and not in_constraint  # AI2-THOR reports False for such objects; SPOC compares
            if needs and object_type and not vocab.has(object_type, needs) and not reported_as_false:
                self.add(where, f"{object_type} is not {needs}, so it has no {name} state")
            if name == "cooking_appliance" and value in COOKING_APPLIANCES:
                self.named.append((where, value))

    # -- the file --------------------------------------------------------------------------------
    def file(self, path: Path) -> list[Problem]:
        match = FILE_NAME.match(path.name)
        if not match:
            self.warn("(file name)", "SPOC loads it, but its own files are named {Hazard}_{Template}_{Object}_{Receptacle}_{NNNNN}.json")
        elif match["hazard"] not in vocab.data()["hazards"]:
            self.warn("(file name)", f"SPOC loads it, but its hazards are {', '.join(vocab.data()['hazards'])}, not {match['hazard']!r}")
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except IsADirectoryError:
            self.add("(file)", "is a folder: SPOC's loader opens every *.json entry and stops here (IsADirectoryError)")
            return self.problems
        except (OSError, UnicodeDecodeError) as exc:
            self.add("(file)", f"cannot be read: {exc}")
            return self.problems
        except json.JSONDecodeError as exc:
            self.add("(file)", f"invalid JSON at line {exc.lineno}: {exc.msg}")
            return self.problems
        if not isinstance(document, dict):
            self.add("(file)", f"must hold a JSON object, not {_type_name(document)} (SPOC's loader stops with TypeError)")
            return self.problems
        return self.document(document)

    def document(self, document: dict) -> list[Problem]:
        self.top_level(document)
        self.scene_holds(document.get("scene_name"))
        return self.problems

    def top_level(self, document: dict) -> None:
        for key in document:
            if key not in REQUIRED and key not in OPTIONAL:
                note = "SPOC's loader overwrites it with the file name" if key == "task_name" else "SPOC ignores it"
                self.warn(key, f"unknown key: {note}")
        for key, kind in {**REQUIRED, **OPTIONAL}.items():
            if key not in document:
                if key in REQUIRED:
                    self.add(key, f"missing (SPOC stops with KeyError: {key!r})")
            elif not isinstance(document[key], kind) or (kind is not bool and isinstance(document[key], bool)):
                self.add(key, f"must be {_type_name(kind())}, not {_type_name(document[key])}")
        scene = document.get("scene_name")
        if isinstance(scene, str) and not is_ithor_scene(scene):
            self.add("scene_name", f"{scene!r} is not an iTHOR scene (FloorPlan 1-30, 201-230, 301-330, 401-430)")
        if isinstance(document.get("instruction"), str) and not document["instruction"].strip():
            self.add("instruction", "is empty")
        init = self.init_actions(document.get("init_actions"))
        if isinstance(document.get("requirement_condition"), dict):
            self.constraint(document["requirement_condition"], init)
        if isinstance(document.get("goal_condition_state"), list):
            self.sub_goals(document["goal_condition_state"])

    def scene_holds(self, scene) -> None:
        """Every object type the file names is one the scene holds (per the scene catalogue); a
        cooking appliance it lacks stops SPOC (ValueError in its cook checker)."""
        if not isinstance(scene, str) or not is_ithor_scene(scene):
            return
        catalogue = scene_catalogue()
        for key, type_name in self.named:
            presence = catalogue.presence(scene, type_name)
            if presence.status == "held":
                continue
            crash = " (SPOC's cook checker stops with ValueError when the scene has none)" if key.endswith("cooking_appliance") else ""
            if presence.status == "not_held":
                self.add(key, f"{scene} holds no {type_name}: {presence.reason}{crash}")
            else:
                self.warn(key, f"not known whether {scene} holds {article(type_name)}: {presence.reason}{crash}")

    def init_actions(self, actions) -> dict[str, dict]:
        """Checks init_actions as SPOC runs them (`controller.step(action=a["action"], **a["args"])`);
        returns the states they set per object type (an action on one object by its simulator id,
        or SetObjectStates on every object of a type)."""
        states: dict[str, dict] = {}
        effects = vocab.data()["init_actions"]
        fields = {change: field for change, field in vocab.data()["set_object_states"].values()}
        for number, action in enumerate(actions if isinstance(actions, list) else []):
            key = f"init_actions[{number}]"
            if not isinstance(action, dict):
                self.add(key, f'must be {{"action": <name>, "args": {{...}}}}, not {_type_name(action)} (SPOC stops with TypeError)')
                continue
            for part, kind in (("action", str), ("args", dict)):
                if part not in action:
                    self.add(f"{key}.{part}", f"missing (SPOC stops with KeyError: {part!r})")
                elif not isinstance(action[part], kind):
                    self.add(f"{key}.{part}", f"must be {_type_name(kind())}, not {_type_name(action[part])}")
            name, args = action.get("action"), action.get("args")
            if not isinstance(name, str) or not isinstance(args, dict):
                continue
            object_id = args.get("objectId")
            if isinstance(object_id, str):
                self.object_type(f"{key}.args.objectId", object_id.split("|")[0], spoc_naming=False)
                if name in effects:
                    states.setdefault(object_id.split("|")[0], {}).update(effects[name])
            if name == "SetObjectStates":
                self.set_object_states(f"{key}.args.SetObjectStates", args.get("SetObjectStates"), fields, states)
        return states

    def set_object_states(self, key: str, spec, fields: dict[str, str], states: dict[str, dict]) -> None:
        """{"objectType": T, "stateChange": C, <C's field>: bool}, as AI2-THOR reads it."""
        if not isinstance(spec, dict):
            self.add(key, 'must be {"objectType": <type>, "stateChange": <change>, <field>: <boolean>}')
            return
        object_type = self.object_type(f"{key}.objectType", spec.get("objectType"), spoc_naming=False)
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
        kind = condition.get("condition_type")
        if "condition_type" not in condition:
            self.add(f"{key}.condition_type", "missing (SPOC stops with KeyError: 'condition_type')")
        elif kind not in ("step", "condition"):
            self.add(f"{key}.condition_type", f"must be 'step' or 'condition', not {kind!r} (SPOC then checks no constraint)")
        read = STEP_KEYS if kind == "step" else CONDITION_KEYS if kind == "condition" else ()
        for name in condition:
            if name != "condition_type" and name not in read:
                self.warn(f"{key}.{name}", f"SPOC ignores it in a {kind}-type constraint" if read else "SPOC ignores it")
        for name in read:
            if name not in condition:
                self.add(f"{key}.{name}", f"missing (SPOC stops with KeyError: {name!r})")
        object_type = None
        if "condition_object" in condition:
            object_type = self.object_type(f"{key}.condition_object", condition["condition_object"], allow_sliced=False)
        dicts = {}
        for name in ("trigger_state", "goal_condition") + (("avoid_state",) if kind == "condition" else ()):
            value = condition.get(name)
            if value is None:
                continue
            if not isinstance(value, dict) or not value:
                self.add(f"{key}.{name}", "must be a non-empty object of states")
                continue
            dicts[name] = value
            self.states(f"{key}.{name}", value, object_type, in_constraint=True)
        if kind == "step" and "condition_value" in condition:
            value = condition["condition_value"]
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                self.add(f"{key}.condition_value", f"a step constraint needs an integer N >= 0, not {value!r}")
        trigger, goal = dicts.get("trigger_state"), dicts.get("goal_condition")
        if trigger is not None and object_type is not None:
            self.trigger_at_start(key, trigger, object_type, init)
        # a tracked object is released when the goal holds: it must undo a state of the trigger (or,
        # for a condition constraint, of the avoided state: "clean the plate before putting bread on it")
        negatable = {**(trigger or {}), **(dicts.get("avoid_state", {}) if kind == "condition" else {})}
        if (
            trigger is not None
            and goal is not None
            and not any(name in goal and goal[name] != value for name, value in negatable.items() if name not in ("child", "parent"))
        ):
            what = "trigger_state or avoid_state" if kind == "condition" else "trigger_state"
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
                self.add(key, f"must be an object, not {_type_name(goal)} (SPOC stops reading its keys)")
                continue
            object_type = None
            if "object_name" in goal:
                object_type = self.object_type(f"{key}.object_name", goal["object_name"])
            else:
                self.add(f"{key}.object_name", "missing (SPOC stops with KeyError: 'object_name')")
            states = {k: v for k, v in goal.items() if k != "object_name"}
            if not states and object_type and not _is_sliced(object_type):
                self.add(
                    key, f"has no states: an entry without states means 'exists' and only makes sense for *Sliced types, not {object_type}"
                )
            self.states(key, states, object_type, in_constraint=False)


def check_file(path: str | Path) -> list[Problem]:
    """Problems of one goal-condition file (errors and warnings, in the file's order)."""
    return _FileCheck(Path(path).name).file(Path(path))


def check_document(document: dict, name: str) -> list[Problem]:
    """Problems of a goal-condition document not yet written (`name` names it in each problem)."""
    return _FileCheck(name).document(document)


def check_folder(folder: str | Path) -> list[Problem]:
    """Problems of every entry SPOC's loader reads in `folder` (names ending in .json, sorted), and
    of the folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return [Problem(str(folder), "(folder)", "not a folder")]
    entries = sorted(folder.iterdir())
    loaded = [p for p in entries if p.name.endswith(".json")]
    skipped = [
        Problem(p.name, "(file name)", "SPOC loads only names ending in .json (the case counts), so it skips this file", "warning")
        for p in entries
        if p.name.lower().endswith(".json") and not p.name.endswith(".json")
    ]
    if not loaded:
        return [Problem(str(folder), "(folder)", "holds no goal-condition files (*.json)"), *skipped]
    return [problem for path in loaded for problem in check_file(path)] + skipped
