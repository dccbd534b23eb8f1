"""The scene catalogue: which AI2-THOR object types each iTHOR scene holds, and how that is known
(data in scenes.json, derived from ALFRED by scripts/build_scene_catalogue.py; see its "about").

A type is `held` by a scene (ALFRED's list of the scene's objects names it), `not_held` (no scene
of the scene's room type holds it) or `unknown`. A `*Sliced` type (and EggCracked) is present
where the object it comes from is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from safeforge.spoc import _vocabulary as vocab

DATA_FILE = Path(__file__).with_name("scenes.json")
SCENE_NUMBERS = (*range(1, 31), *range(201, 231), *range(301, 331), *range(401, 431))
ROOM_WORDS = {"Kitchen": "kitchen", "LivingRoom": "living room", "Bedroom": "bedroom", "Bathroom": "bathroom"}
_SPAWNED = {"EggCracked": "Egg"}  # what an action turns the object into


def article(word: str) -> str:
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def is_ithor_scene(name: str) -> bool:
    found = re.fullmatch(r"FloorPlan(\d+)", name)
    return found is not None and int(found.group(1)) in SCENE_NUMBERS


def source_type(type_name: str) -> str:
    """The type a scene holds for `type_name`: AppleSliced -> Apple, EggCracked -> Egg, else itself."""
    if type_name in _SPAWNED:
        return _SPAWNED[type_name]
    if type_name.endswith("Sliced") and vocab.has(type_name[: -len("Sliced")], "sliceable"):
        return type_name[: -len("Sliced")]
    return type_name


@dataclass(frozen=True)
class Presence:
    """Whether a scene holds a type (`held`, `not_held` or `unknown`), and how that is known."""

    status: str
    reason: str


@dataclass(frozen=True)
class Scene:
    name: str
    room_type: str  # Kitchen | LivingRoom | Bedroom | Bathroom
    held: dict[str, int]  # type -> the scene's ALFRED trajectories that show it (0: listed only)
    room_holds: frozenset[str]  # the types some scene of this room type holds
    object_ids: dict[str, list[str]] = field(default_factory=dict)  # type -> ids ALFRED names in the scene (some, not a count)
    start_poses: dict[str, dict] = field(default_factory=dict)  # receptacle type -> a pose an object started at in or on it

    @property
    def room(self) -> str:
        return ROOM_WORDS[self.room_type]

    def presence(self, type_name: str) -> Presence:
        held = source_type(type_name)
        if held in self.held:
            shown = self.held[held]
            seen = f", shown by {shown} of its ALFRED trajectories" if shown else ""
            return Presence("held", f"ALFRED's list of {self.name}'s objects names {article(held)}{seen}")
        if held in _alfred_vocabulary() and held not in self.room_holds:
            return Presence(
                "not_held", f"{self.name} is {article(self.room)}, and no {self.room} of the scene catalogue holds {article(held)}"
            )
        if held in self.room_holds:
            return Presence("unknown", f"AI2-THOR 2.1.0's {self.name} had no {held} (other {self.room}s do); SPOC's AI2-THOR 5.0 may")
        return Presence("unknown", f"the scene catalogue (AI2-THOR 2.1.0) does not cover the type {held}")

    def object_types(self) -> list[str]:
        """The types the scene holds."""
        return sorted(self.held)

    def states(self) -> dict[str, list[str]]:
        """Each held type with the SPOC states it has (see `type_states`)."""
        return {name: type_states(name) for name in self.object_types()}


def type_states(type_name: str) -> list[str]:
    """The states SPOC can judge on a type: isToggled, isOpen, isDirty, isCooked, isFilledWithLiquid
    and fillLiquid, isBroken, sliced (it becomes <Type>Sliced), child (a receptacle), parent (a
    pickupable object is put somewhere), temperature (every object)."""
    definitions = vocab.data()["states"].items()
    found = [name for name, definition in definitions if definition.get("needs") and vocab.has(type_name, definition["needs"])]
    if vocab.has(type_name, "sliceable"):
        found.append("sliced")
    if vocab.has(type_name, "pickupable"):
        found.append("parent")
    return [*found, "temperature"]


class SceneCatalogue:
    """The 120 iTHOR scenes and the object types each holds."""

    def __init__(self, data: dict):
        self.provenance: dict = data["provenance"]
        rooms = {name: frozenset(room["types"]) for name, room in data["room_types"].items()}
        self.scenes: dict[str, Scene] = {
            name: Scene(
                name,
                entry["room_type"],
                dict(entry["held"]),
                rooms[entry["room_type"]],
                entry.get("object_ids", {}),
                entry.get("start_poses", {}),
            )
            for name, entry in data["scenes"].items()
        }

    def scene(self, name: str) -> Scene:
        if name not in self.scenes:
            raise KeyError(f"{name!r} is not an iTHOR scene (FloorPlan 1-30, 201-230, 301-330, 401-430)")
        return self.scenes[name]

    def presence(self, scene_name: str, type_name: str) -> Presence:
        return self.scene(scene_name).presence(type_name)

    def scenes_holding(self, types: Iterable[str], room_type: str | None = None) -> list[str]:
        """The scenes known to hold every one of `types` (AI2-THOR types; *Sliced types count as
        the object they come from), optionally of one room type, in scene order."""
        wanted = [vocab.spoc_name(t) for t in types]
        return [
            name
            for name, scene in self.scenes.items()
            if (room_type is None or scene.room_type == room_type) and all(scene.presence(t).status == "held" for t in wanted)
        ]


@cache
def _alfred_vocabulary() -> frozenset[str]:
    return frozenset().union(*(scene.room_holds for scene in scene_catalogue().scenes.values()))


@cache
def scene_catalogue() -> SceneCatalogue:
    """The shipped scene catalogue (read once)."""
    return SceneCatalogue(json.loads(DATA_FILE.read_text(encoding="utf-8")))
