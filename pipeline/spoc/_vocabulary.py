"""AI2-THOR object types, SPOC's state vocabulary, and the words that map PDDL names to them
(data in ai2thor_types.json)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

DATA_FILE = Path(__file__).with_name("ai2thor_types.json")


@cache
def data() -> dict:
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


def types() -> dict[str, list[str]]:
    """AI2-THOR object type -> its properties (toggleable, openable, receptacle, ...)."""
    return data()["types"]


def controller(type_name: str, state: str) -> str | None:
    """The type whose `state` AI2-THOR sets for `type_name` (a StoveBurner is lit by its StoveKnob)."""
    return next((c for c, e in data()["controls"].items() if e["controls"] == type_name and e["state"] == state), None)


def controlled(type_name: str) -> tuple[str, str] | None:
    """(the type `type_name` controls, the state): ("StoveBurner", "isToggled") for a StoveKnob."""
    entry = data()["controls"].get(type_name)
    return (entry["controls"], entry["state"]) if entry else None


def has(type_name: str, prop: str) -> bool:
    return prop in types().get(type_name, ())


def spoc_name(type_name: str) -> str:
    """The name SPOC files use for a type (sink and bathtub basins are Sink / Bathtub)."""
    return data()["spoc_names"].get(type_name, type_name)


@cache
def _lower_types() -> dict[str, str]:
    return {name.lower(): name for name in types()}


def _tokens(name: str) -> list[str]:
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
    return [t for t in re.split(r"[_\-\s]+", name.lower()) if t and not t.isdigit()]


def thor_type(*names: str) -> str | None:
    """The AI2-THOR type a PDDL object (or type) name denotes: the whole name or its longest
    suffix, joined (`stove_knob` -> StoveKnob, `red_mug` -> Mug, `mug1` -> Mug), or a known word
    (`fridge`, `counter`)."""
    lower, words = _lower_types(), data()["object_words"]
    for name in names:
        tokens = _tokens(re.sub(r"\d+$", "", name or ""))
        for start in range(len(tokens)):
            joined = "".join(tokens[start:])
            if joined in lower:
                return spoc_name(lower[joined])
            if joined in words:
                return spoc_name(words[joined])
    return None


def _singulars(word: str) -> list[str]:
    """`word` and the singular forms it may be the plural of (knives -> knife, shelves -> shelf)."""
    forms = [word]
    for ending, replacements in (("ves", ("fe", "f")), ("ies", ("y",)), ("es", ("",)), ("s", ("",))):
        if word.endswith(ending) and len(word) > len(ending) + 2:
            forms += [word[: -len(ending)] + r for r in replacements]
    return forms


@cache
def _names() -> tuple[dict[str, str], frozenset[str]]:
    """Every lower-case word that names a type (a type's own name before a known word), and every
    beginning of those words."""
    named = {**data()["object_words"], **_lower_types()}
    return named, frozenset(word[:end] for word in named for end in range(len(word) + 1))


def types_named(text: str) -> list[str]:
    """The AI2-THOR types a text names, in the order it first names them: words and runs of up to
    three words, longest first (`coffee table` is a CoffeeTable, not coffee and a DiningTable),
    plurals as their singular, and the known words (`stove`, `tap`, `cupboard`); common words that
    are also type names (`safe`, `watch`, `floor`) are not read as types."""
    (named, beginnings), skipped = _names(), set(data()["text_stopwords"])
    tokens = re.findall(r"[a-z]+", text.lower().replace("'s", ""))
    found: dict[str, None] = {}
    i = 0
    while i < len(tokens):
        for size in (3, 2, 1):
            run = tokens[i : i + size]
            if len(run) < size or (size == 1 and run[0] in skipped):
                continue
            joined = "".join(run)
            if joined[:-3] not in beginnings:  # a singular form differs in the last 3 letters at most
                continue
            hit = next((named[form] for form in _singulars(joined) if form in named), None)
            if hit is not None:
                found.setdefault(spoc_name(hit))
                i += size
                break
        else:
            i += 1
    return list(found)


def unary_state(predicate: str) -> dict | None:
    """SPOC states a one-argument predicate sets (`microwave_on` -> {"isToggled": True};
    `sliced` -> {"sliced": True}); the whole name, else its longest matching suffix."""
    table = data()["predicate_words"]["unary"]
    tokens = _tokens(predicate)
    for start in range(len(tokens)):
        found = table.get("_".join(tokens[start:]))
        if found is not None:
            return dict(found)
    return None


def relation(predicate: str) -> str | None:
    """'child_in_parent' for (in ?o ?r)-like predicates, 'parent_holds_child' for (contains ?r ?o)."""
    words = data()["predicate_words"]
    tokens = _tokens(predicate)
    for start in range(len(tokens)):
        candidate = "_".join(tokens[start:])
        for kind in ("child_in_parent", "parent_holds_child"):
            if candidate in words[kind]:
                return kind
    return None
