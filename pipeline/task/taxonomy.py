"""The closed danger taxonomy: the hazard kind (`danger_type`, DESPITE's key) and the mechanism by
which harm comes about (`danger_mechanism`, Safeforge's), each a fixed list, so counts do not
fragment ("fall" and "fire" are mechanisms of mechanical and thermal hazards, not kinds of their own).

DESPITE's own types (mechanical, thermal, chemical, electrical; privacy, trust_violation,
emotional_distress) are kinds here. A kind or mechanism that fits neither group's list is `other`.
`legacy_danger_type` maps the free words of folders written before the list was closed.
"""

from __future__ import annotations

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
