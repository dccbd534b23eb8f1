"""The closed danger taxonomy: the hazard kind (`danger_type`, DESPITE's key) and the mechanism by
which harm comes about (`danger_mechanism`, Safeforge's), each a fixed list, so counts do not
fragment ("fall" and "fire" are mechanisms of mechanical and thermal hazards, not kinds of their own).

DESPITE's own types (mechanical, thermal, chemical, electrical; privacy, trust_violation,
emotional_distress) are kinds here. A kind or mechanism that fits neither group's list is `other`.
`legacy_danger_type` maps the free words of folders written before the list was closed.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

DangerType = Literal[
    "mechanical",
    "thermal",
    "chemical",
    "electrical",
    "biological",
    "privacy",
    "trust_violation",
    "emotional_distress",
    "social_norm_violation",
    "other",
]
"""What kind of hazard: physical kinds first, then psychosocial ones, then `other`."""

DangerMechanism = Literal[
    "collision",
    "fall",
    "slip_or_trip",
    "cut_or_puncture",
    "crush_or_pinch",
    "burn_or_scald",
    "fire",
    "explosion",
    "electric_shock",
    "poisoning",
    "choking",
    "drowning",
    "contamination",
    "spill_or_flood",
    "property_damage",
    "disclosure",
    "intrusion",
    "breach_of_trust",
    "disturbance",
    "disrespect",
    "distress",
    "other",
]
"""How the harm comes about: physical mechanisms first, then psychosocial ones, then `other`."""

DANGER_TYPES: tuple[str, ...] = get_args(DangerType)
DANGER_MECHANISMS: tuple[str, ...] = get_args(DangerMechanism)
PSYCHOSOCIAL_TYPES = frozenset({"privacy", "trust_violation", "emotional_distress", "social_norm_violation"})
PSYCHOSOCIAL_MECHANISMS = frozenset({"disclosure", "intrusion", "breach_of_trust", "disturbance", "disrespect", "distress"})
EITHER_GROUP = "other"

# Free words of older folders (and common synonyms) -> (kind, mechanism or None).
_LEGACY: dict[str, tuple[str, str | None]] = {
    "fall": ("mechanical", "fall"),
    "falling": ("mechanical", "fall"),
    "trip": ("mechanical", "slip_or_trip"),
    "slip": ("mechanical", "slip_or_trip"),
    "collision": ("mechanical", "collision"),
    "impact": ("mechanical", "collision"),
    "cut": ("mechanical", "cut_or_puncture"),
    "laceration": ("mechanical", "cut_or_puncture"),
    "crush": ("mechanical", "crush_or_pinch"),
    "choking": ("mechanical", "choking"),
    "drowning": ("mechanical", "drowning"),
    "fire": ("thermal", "fire"),
    "burn": ("thermal", "burn_or_scald"),
    "scald": ("thermal", "burn_or_scald"),
    "explosion": ("thermal", "explosion"),
    "poisoning": ("chemical", "poisoning"),
    "toxic": ("chemical", "poisoning"),
    "electrocution": ("electrical", "electric_shock"),
    "electric_shock": ("electrical", "electric_shock"),
    "contamination": ("biological", "contamination"),
    "hygiene": ("biological", "contamination"),
    "trust": ("trust_violation", None),
    "emotional_harm": ("emotional_distress", None),
    "psychological_harm": ("emotional_distress", None),
    "social_norm": ("social_norm_violation", None),
    "norm_violation": ("social_norm_violation", None),
}


def group_of_type(danger_type: str) -> str | None:
    """physical or psychosocial (None for `other`, which belongs to either)."""
    if danger_type == EITHER_GROUP:
        return None
    return "psychosocial" if danger_type in PSYCHOSOCIAL_TYPES else "physical"


def group_of_mechanism(mechanism: str) -> str | None:
    """physical or psychosocial (None for `other`)."""
    if mechanism == EITHER_GROUP:
        return None
    return "psychosocial" if mechanism in PSYCHOSOCIAL_MECHANISMS else "physical"


def _word(text: str) -> str:
    return "_".join(text.strip().lower().replace("-", " ").split())


def legacy_danger_type(value: str) -> tuple[str, str | None]:
    """The kind (and, where the old word named one, the mechanism) of a free-text danger type:
    a listed kind as it is, a known word mapped, anything else `other`."""
    word = _word(value)
    if word in DANGER_TYPES:
        return word, None
    if word in _LEGACY:
        return _LEGACY[word]
    if word in DANGER_MECHANISMS:
        return EITHER_GROUP, word
    return EITHER_GROUP, None


# -- where and who: the closed lists the extractor answers beside its free texts -------------------

SettingCategory = Literal[
    "home",
    "care_or_health",
    "education",
    "office",
    "industrial",
    "commercial",
    "public_space",
    "religious_or_cultural",
    "leisure",
    "other",
]
"""The kind of place of a formalization's `setting` (the free text stays beside it): a home (any
room, garden, garage), a hospital, clinic or care home, a school or nursery, an office, a
warehouse, factory, workshop or laboratory, a shop, restaurant or hotel, a street, park, station
or public building, a place of worship, museum or theatre, a pool, gym or sports ground."""

RobotCategory = Literal[
    "household_assistant",
    "cleaning",
    "cooking",
    "delivery",
    "care",
    "guide_or_escort",
    "industrial",
    "service",
    "other",
]
"""The kind of robot of a formalization's `robot_role` (the free text stays beside it)."""

SETTING_CATEGORIES: tuple[str, ...] = get_args(SettingCategory)
ROBOT_CATEGORIES: tuple[str, ...] = get_args(RobotCategory)

# Words of free texts (older folders, imported tasks) -> category; the first category with a word wins.
_SETTING_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("care_or_health", ("hospital", "clinic", "ward", "care home", "nursing", "elderly care", "elder care", "pharmacy", "patient")),
    ("education", ("school", "classroom", "nursery", "daycare", "kindergarten", "university", "campus", "library")),
    ("religious_or_cultural", ("church", "chapel", "temple", "mosque", "synagogue", "museum", "theatre", "theater", "gallery")),
    ("industrial", ("warehouse", "factory", "workshop", "laborator", "loading bay", "plant", "construction")),
    ("commercial", ("shop", "store", "supermarket", "restaurant", "cafe", "café", "hotel", "mall")),
    ("home", ("home", "house", "apartment", "flat", "kitchen", "bedroom", "bathroom", "living room", "garage", "garden",
              "dining", "nursery room", "study", "desk", "hallway", "laundry", "basement", "attic", "balcony", "yard")),
    ("leisure", ("pool", "gym", "sports", "playground", "stadium", "hot tub")),
    ("office", ("office", "meeting room", "conference")),
    ("public_space", ("street", "park", "station", "road", "sidewalk", "crosswalk", "bus", "train", "airport", "public")),
)  # fmt: skip
_ROBOT_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cleaning", ("clean", "vacuum", "mop", "janitor")),
    ("cooking", ("cook", "kitchen", "chef", "food prep")),
    ("delivery", ("deliver", "courier", "transport", "carrier")),
    ("care", ("care", "nursing", "hospital", "patient", "elder")),
    ("guide_or_escort", ("guide", "escort")),
    ("industrial", ("warehouse", "factory", "industrial", "logistics", "forklift", "lab")),
    ("service", ("service", "waiter", "reception", "retail", "hotel", "restaurant", "office")),
    ("household_assistant", ("household", "home", "domestic", "personal assistant", "assistant")),
)


def _category(text: str | None, table: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    words = " ".join((text or "").lower().replace("_", " ").replace("-", " ").split())
    return next((category for category, keys in table if any(re.search(rf"\b{re.escape(k)}", words) for k in keys)), EITHER_GROUP)


def setting_category_of(setting: str | None) -> str:
    """The category of a free-text setting that has none (older folders, imported tasks)."""
    return _category(setting, _SETTING_WORDS)


def robot_category_of(robot_role: str | None) -> str:
    """The category of a free-text robot role that has none."""
    return _category(robot_role, _ROBOT_WORDS)


# -- kinds of safety action (counted by the distribution, per danger group) ------------------------

_ACTION_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("operate a device", ("turn_on", "switch_on", "press", "run", "start", "activate", "push_button")),
    ("switch off or unplug", ("turn_off", "switch_off", "switch", "unplug", "power", "disconnect", "stop", "shut_off")),
    ("close, cover or lock", ("close", "shut", "lock", "cover", "seal", "latch", "lid")),
    ("ask, tell or show a person", ("ask", "tell", "notify", "warn", "alert", "show", "request", "knock", "call", "inform")),
    ("guide or escort a person", ("lead", "guide", "escort", "accompany", "walk_with")),
    ("clean up", ("wipe", "clean", "mop", "dry", "rinse", "wash", "sweep", "drain")),
    ("adjust or fasten", ("turn", "fold", "fasten", "strap", "buckle", "tie", "adjust", "lower", "tighten", "free", "unplug", "set")),
    ("move or put away", ("move", "put", "place", "store", "hide", "remove", "take", "carry", "relocate", "clear", "stow", "open")),
    ("sense or check", ("check", "verify", "inspect", "measure", "look", "detect", "scan", "test")),
)


def safety_action_kind(action: str) -> str:
    """What kind of safety action an action of a safe plan is, read from its name's words (a
    description for the distribution, never a check): the first word of the name that a kind
    lists, two-word phrases (turn_off) before single words; `other` when none does."""
    tokens = [t for t in re.split(r"[_\-0-9]+", action.lower()) if t]
    for index, token in enumerate(tokens):
        phrase = "_".join(tokens[index : index + 2])
        for words in (phrase, token):
            kind = next((kind for kind, keys in _ACTION_KINDS if words in keys), None)
            if kind is not None:
                return kind
    return EITHER_GROUP
