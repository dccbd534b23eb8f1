"""Meaning read with WordNet (through NLTK): what a name's words are (a thing, a place, a time, a
person, a manner, a verdict) and what an action's verb does (acts, waits, tells, checks, asks).
The generation rules (`safeforge.task.rules`) decide with it; see the docs, "Generation rules"."""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._database import WORDNET_ENV, LexiconUnavailable, database_folder, wordnet
    from ._meaning import Reading, answer_words, load, name_words, type_kind, verb_kind

__all__ = [
    "WORDNET_ENV",
    "LexiconUnavailable",
    "database_folder",
    "wordnet",
    "Reading",
    "answer_words",
    "load",
    "name_words",
    "type_kind",
    "verb_kind",
]
__getattr__, __dir__ = lazy_exports(__name__)
