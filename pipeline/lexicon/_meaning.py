"""What the words of a PDDL name mean, read with WordNet (`data/concepts.json` names the seed senses
of each concept and the source that states it).

- A name is split at `_`, `-` and digits, and its parts are joined back into WordNet's own compound
  words where WordNet has them (`surge_protector`, `place_mat`); a part WordNet does not know is
  tried as two words written together (`carefullift`: careful + lift).
- A word is read in its first sense of each part of speech (WordNet orders senses by frequency).
  A word whose first noun sense is a concrete thing (an artifact, a person, an animal, food, a body
  part, a substance, a natural object, a plant) and that is no adjective or adverb is that thing:
  `mudguard`, `guard`, `gentlewoman` leak nothing.
- Verdict and manner words: a first sense that is a seed of the concept, or next to one in WordNet
  (similar, opposite, formed from it, an adverb of it), or whose definition uses a seed's own word
  (`benign`: "not dangerous to health"), gives the answer away. Each reading names its evidence.
- Types: the head word of a type name (its last word, as English compounds go: `area_rug` is a
  rug) is a time, a place, a person, the robot, a device or a thing by its first noun sense's
  WordNet category and ancestors.
- Verbs: the first word of an action's name, read as a verb in its first sense: waits (a seed of
  waiting or below one, or a verb of being), tells, asks, checks (seeds and below, or verbs of
  thinking and perceiving), or acts.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from safeforge.common.resources import package_path
from safeforge.lexicon._database import sense_count, wordnet

_SPLIT = re.compile(r"[_\-0-9]+")
CONCRETE = {"noun.artifact", "noun.person", "noun.animal", "noun.food", "noun.body", "noun.substance", "noun.object", "noun.plant"}
ANSWER_CONCEPTS = ("verdict", "manner")
VERB_CONCEPTS = ("waiting", "telling", "asking", "checking")
_VERB_KINDS = {"waiting": "waits", "telling": "tells", "asking": "asks", "checking": "checks"}
_MIN_PART = 3  # a word written together with another is at least this long
_LOCK = threading.RLock()
"""NLTK's WordNet reader is not safe across threads (its files are shared seekable streams): one
reading at a time. Each answer is cached per word, so a lookup is short."""


def _locked(function):
    """`function` with WordNet read by one thread at a time, its answers cached per argument."""
    cached = functools.lru_cache(maxsize=16384)(function)

    @functools.wraps(function)
    def wrapper(*args):
        with _LOCK:
            return cached(*args)

    return wrapper


@dataclass(frozen=True)
class Reading:
    """What one word of a name is, and the evidence."""

    word: str
    kind: str  # verdict, manner, thing, time, place, person, robot, device, waits, tells, asks, checks, being, acts, unknown
    evidence: str


@functools.cache
def _concepts() -> dict[str, Any]:
    return json.loads(package_path("safeforge", "lexicon", "data", "concepts.json").read_text(encoding="utf-8"))


@_locked
def _seeds(concept: str) -> frozenset:
    wn = wordnet()
    return frozenset(wn.synset(name) for name in _concepts()[concept]["seeds"])


def _neighbours(synset) -> Iterator[tuple[Any, str]]:
    for other in synset.similar_tos():
        yield other, "similar to"
    for other in synset.also_sees():
        yield other, "related to"
    for lemma in synset.lemmas():
        for other in lemma.antonyms():
            yield other.synset(), "the opposite of"
        for other in lemma.derivationally_related_forms():
            yield other.synset(), "formed from"
        for other in lemma.pertainyms():
            yield other.synset(), "an adverb of"


@_locked
def _closure(concept: str) -> dict[Any, tuple[Any, str]]:
    """{sense: (the seed it is next to, how)} for the seeds of `concept` and their neighbours."""
    found: dict[Any, tuple[Any, str]] = {seed: (seed, "") for seed in _seeds(concept)}
    for seed in _seeds(concept):
        for other, how in _neighbours(seed):
            found.setdefault(other, (seed, how))
    return found


@functools.cache
def _definition_words(concept: str) -> frozenset[str]:
    """The words a definition uses when it states the concept (`data/concepts.json`)."""
    return frozenset(_concepts()[concept]["definition_words"])


def _word_of(synset) -> str:
    return synset.lemmas()[0].name()


def senses(word: str, pos: str, count: int = 1) -> tuple:
    """The first `count` senses of `word` (or its base form: `warned` is warn) as a noun (n), verb
    (v), adjective (a, satellites included) or adverb (r), most frequent first; only those are read
    (a word's other senses, `run` has 41 as a verb, are not)."""
    found = []
    for number in range(1, count + 1):
        if (sense := _sense(word, pos, number)) is None:
            break
        found.append(sense)
    return tuple(found)


@_locked
def _sense(word: str, pos: str, number: int):
    wn = wordnet()
    base = wn.morphy(word, pos)
    if base is None:
        return None
    try:
        return wn.synset(f"{base}.{pos}.{number:02d}")
    except Exception:  # no such sense (NLTK raises WordNetError or ValueError)
        return None


@_locked
def _all_first_senses(word: str) -> list:
    return [first[0] for pos in "nvar" if (first := senses(word, pos))]


@_locked
def _first_senses(word: str) -> dict[str, Any]:
    """{part of speech: first sense} of `word` in its usual parts of speech: those whose first sense
    WordNet's corpus tagged most often (`minute` is a noun, `fast` an adjective), all when none was
    tagged. Satellite adjectives count as adjectives."""
    firsts = {pos: first[0] for pos in "nvar" if (first := senses(word, pos))}
    counts = {pos: _tagged(sense, word) for pos, sense in firsts.items()}
    most = max(counts.values(), default=0)
    return {pos: sense for pos, sense in firsts.items() if counts[pos] == most} if most else firsts


def _tagged(sense, word: str) -> int:
    """How often the corpus tagged `word`, as written (`guarded` the adjective, not guard), in `sense`."""
    return max((sense_count(lemma.key()) for lemma in sense.lemmas() if lemma.name().lower() == word), default=0)


@_locked
def _known(word: str) -> bool:
    """Whether WordNet has `word` or a form of it (`place_mats`: place_mat), without reading its senses."""
    return word in _lemma_names() or wordnet().morphy(word) is not None


@functools.cache
def _lemma_names() -> frozenset[str]:
    return frozenset(wordnet().all_lemma_names())


def name_words(name: str) -> list[str]:
    """The words of a name: WordNet's compounds kept whole (`surge_protector`), parts WordNet does not
    know split in two where both halves are words (`carefullift` -> careful, lift)."""
    return list(_name_words(name))


@_locked
def _name_words(name: str) -> tuple[str, ...]:
    tokens = [t for t in _SPLIT.split(name.lower()) if t]
    words, i = [], 0
    while i < len(tokens):
        for j in range(len(tokens), i, -1):
            joined = "_".join(tokens[i:j])
            if j - i > 1 and _known(joined):
                words.append(joined)
                i = j
                break
        else:
            words.extend(_halves(tokens[i]))
            i += 1
    return tuple(words)


def _halves(token: str) -> list[str]:
    if _known(token) or len(token) < 2 * _MIN_PART:
        return [token]
    for cut in range(len(token) - _MIN_PART, _MIN_PART - 1, -1):  # the longest first half first
        first, second = token[:cut], token[cut:]
        if _known(first) and _known(second):
            return [first, second]
    return [token]


def _is_thing(firsts: dict[str, Any]) -> bool:
    noun = firsts.get("n")
    return noun is not None and noun.lexname() in CONCRETE and "a" not in firsts and "r" not in firsts


def _answer_reading(word: str) -> Reading | None:
    if word in _concepts()["despite_rejected"]["words"]:
        return Reading(word, "verdict", f"`{word}`: a word DESPITE's generator rejects in names")
    for concept in ANSWER_CONCEPTS:  # a seed itself, in any part of speech (`care`, a verb first, is the seed care.n.01)
        if seed := next((s for s in _all_first_senses(word) if s in _seeds(concept)), None):
            return Reading(word, concept, f"`{word}`: {seed.name()}, {seed.definition()}, a {concept} word")
    firsts = _first_senses(word)
    if _is_thing(firsts):
        return None
    for concept in ANSWER_CONCEPTS:
        closure = _closure(concept)
        for sense in firsts.values():
            if sense.pos() == "n" and sense.lexname() in CONCRETE:
                continue
            for read in (sense, *_adjectives_of(sense)):
                if read in closure:
                    seed, how = closure[read]
                    via = f" (an adverb of `{_word_of(read)}`)" if read is not sense else ""
                    link = f"{how} `{_word_of(seed)}` ({seed.name()})" if how else f"{read.name()}, {read.definition()}"
                    return Reading(word, concept, f"`{word}`{via}: {link}, a {concept} word")
        if found := _defined_as(word, firsts, concept):
            sense, said = found
            return Reading(word, concept, f'`{word}` ({sense.name()}: "{sense.definition()}") says `{said}`, a {concept} word')
    return None


def _adjectives_of(sense) -> list:
    """The adjectives an adverb is formed from (`softly`: soft)."""
    return [p.synset() for lemma in sense.lemmas() for p in lemma.pertainyms()] if sense.pos() == "r" else []


def _defined_as(word: str, firsts: dict[str, Any], concept: str) -> tuple[Any, str] | None:
    """A sense among the first two of the word as an adjective or an adverb, or its first as a verb
    (in its usual parts of speech), whose definition uses one of the concept's definition words."""
    candidates: list[Any] = []
    for pos, first in firsts.items():
        if pos in "ar":
            candidates += senses(word, pos, 2)
        elif pos == "v":
            candidates.append(first)
    for sense in candidates:
        used = sorted(set(re.findall(r"[a-z]+", sense.definition().lower())) & _definition_words(concept))
        if used:
            return sense, used[0]
    return None


def load() -> None:
    """Load everything a reading needs that costs more than a word's lookups, once per process
    (WordNet, its lemma names and sense counts, the concepts' neighbourhoods): about a second the
    first time, nothing after. Readings load it when they need it; a caller with a time limit calls
    this first."""
    _loaded()


@functools.cache
def _loaded() -> None:
    with _LOCK:
        _lemma_names()
        sense_count("")
        for concept in ANSWER_CONCEPTS:
            _closure(concept)


def answer_words(name: str) -> list[Reading]:
    """The words of `name` that give the danger, the verdict or the safe manner away, each with its
    evidence; a thing's name leaks nothing."""
    _loaded()
    tokens = [t for t in _SPLIT.split(name.lower()) if t]
    rejected = _concepts()["despite_rejected"]["words"]
    pairs = [f"{a}_{b}" for a, b in zip(tokens, tokens[1:], strict=False) if f"{a}_{b}" in rejected]  # high_speed
    found = [Reading(pair, "manner", f"`{pair}`: a word DESPITE's generator rejects in names") for pair in pairs]
    return found + [reading for word in name_words(name) if (reading := _answer_word(word)) is not None]


@_locked
def _answer_word(word: str) -> Reading | None:
    return _answer_reading(word)


# -- types ------------------------------------------------------------------------------------

_TYPE_ANCESTORS = (
    ("robot", ("automaton.n.02",)),
    ("time", ("time_period.n.01", "time_unit.n.01", "time.n.01")),
    ("place", ("location.n.01", "area.n.05", "region.n.03")),
    ("person", ("person.n.01",)),
    ("device", ("device.n.01",)),
)
_LEXNAME_KINDS = {"noun.time": "time", "noun.location": "place", "noun.person": "person"}


@_locked
def type_kind(type_name: str) -> Reading:
    """What a type names, by its head word (the last: an `area_rug` is a rug) in the first of its two
    first noun senses that WordNet places: a time, a place, a person, the robot, a device, or a thing (any other concrete
    sense); unknown when no sense does."""
    words = name_words(type_name)
    head = words[-1] if words else type_name
    nouns = senses(head, "n", 3)
    for noun in [n for n in nouns if not n.instance_hypernyms()][:2]:  # not a named one (Service, a writer)
        if reading := _noun_kind(head, noun):
            return reading
    if not nouns:
        return Reading(head, "unknown", f"`{head}` is no noun WordNet knows")
    return Reading(head, "unknown", f"`{head}` ({nouns[0].name()}) is in WordNet's {nouns[0].lexname()}")


def _noun_kind(head: str, noun) -> Reading | None:
    names = {a.name() for path in noun.hypernym_paths() for a in path}
    said = f"`{head}` ({noun.name()}: {noun.definition()})"
    for kind, marks in _TYPE_ANCESTORS:
        if found := [m for m in marks if m in names]:
            return Reading(head, kind, f"{said} is a kind of {found[0].split('.')[0]}: a {kind}")
    if by_category := _LEXNAME_KINDS.get(noun.lexname()):
        return Reading(head, by_category, f"{said} is in WordNet's {noun.lexname()}: a {by_category}")
    if noun.lexname() in CONCRETE:
        return Reading(head, "thing", f"{said} is a thing")
    return None


# -- verbs ------------------------------------------------------------------------------------


@_locked
def verb_kind(action_name: str) -> Reading:
    """What an action's verb does: the phrasal verb its first two words make where WordNet has one
    (`pick_up`, `double_check`; not one ending in `to`, which in an action's name marks where it goes:
    `go_to` is go, not WordNet's go_to, attend), else its first word, as a verb in its first sense.
    The nearest seed among the sense and its ancestors decides (waits, tells, asks, checks; a request
    also in the second sense of a verb of telling: to ask is first to inquire); else a verb of
    thinking or perceiving checks, a verb of being (WordNet's verb.stative: hold, keep) is `being`,
    and any other verb acts. A phrasal verb of being gives way to its first word (`stand_by`: stand)."""
    tokens = [t for t in _SPLIT.split(action_name.lower()) if t]
    if not tokens:
        return Reading(action_name, "unknown", f"`{action_name}` has no words")
    phrasal = [f"{tokens[0]}{joint}{tokens[1]}" for joint in ("_", "-")] if len(tokens) > 1 and tokens[1] != "to" else []
    readings = [r for r in map(_verb_reading, [*phrasal, tokens[0]]) if r.kind != "unknown"]
    return next((r for r in readings if r.kind != "being"), readings[0] if readings else _verb_reading(tokens[0]))


def _verb_reading(word: str) -> Reading:
    verbs = senses(word, "v", 2)
    if not verbs:
        return Reading(word, "unknown", f"`{word}` is no verb WordNet knows")
    verb = verbs[0]
    asking = verbs[:2] if verb.lexname() == "verb.communication" else verbs[:1]
    for sense in asking:
        if found := _nearest_seed(sense, ("asking",)):
            return _seed_reading(word, sense, *found)
    if found := _nearest_seed(verb, VERB_CONCEPTS):
        return _seed_reading(word, verb, *found)
    said = f"`{word}` ({verb.name()}: {verb.definition()})"
    if verb.lexname() in ("verb.cognition", "verb.perception"):
        return Reading(word, "checks", f"{said} is a verb of thinking or perceiving ({verb.lexname()})")
    if verb.lexname() == "verb.stative":
        return Reading(word, "being", f"{said} is a verb of being (verb.stative)")
    return Reading(word, "acts", f"{said} acts ({verb.lexname()})")


def _nearest_seed(verb, concepts: tuple[str, ...]) -> tuple[str, Any] | None:
    """(concept, seed) of the first seed met going up from `verb` through its ancestors."""
    paths = [list(reversed(path)) for path in verb.hypernym_paths()]
    for depth in range(max(map(len, paths), default=0)):
        for path in paths:
            if depth < len(path):
                for concept in concepts:
                    if path[depth] in _seeds(concept):
                        return concept, path[depth]
    return None


def _seed_reading(word: str, verb, concept: str, seed) -> Reading:
    how = "is" if seed == verb else "is a way to"
    return Reading(word, _VERB_KINDS[concept], f"`{word}` ({verb.name()}: {verb.definition()}) {how} {_word_of(seed)} ({seed.name()})")
