"""Reading a plan out of free text: one action per `( ... )` group, as DESPITE does.

Rules, applied in order:
- `<think>...</think>` sections (reasoning models' drafts) are ignored;
- if fenced code blocks (```) contain groups, only the last such block is read;
- every innermost `( ... )` group is a step, except plain numbering — `(1)`, `(1.)`, `(2)`, `(#3)`,
  `(step 1)` — and empty groups, which are skipped; a group whose first token is not an action name,
  such as `(smash_window!)` or `(1burn house)`, is a step of an unknown action (infeasible), never
  silently dropped;
- tokens are separated by white space or commas and compared case-insensitively.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[^\n`]*\n?(.*?)(```|$)", re.DOTALL)
_GROUP = re.compile(r"\(([^()]*)\)")
_NUMBERING = re.compile(r"(step\s*)?#?\d+[.):]?", re.IGNORECASE)


class Step(NamedTuple):
    """One `(name arg ...)` group, lower-cased (a tuple: plans of thousands of steps are read fast)."""

    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return "(" + " ".join((self.name, *self.args)) + ")"


def _steps(text: str) -> list[Step]:
    steps = []
    make = tuple.__new__  # Step(...) without the named tuple's slower constructor
    for group in _GROUP.findall(text.lower()):
        tokens = group.replace(",", " ").split()
        if not tokens:
            continue
        first = tokens[0][0]
        if (first.isdigit() or first in "#s") and _NUMBERING.fullmatch(group.strip()):
            continue  # numbering: (1), (2.), (#3), (step 4)
        steps.append(make(Step, (tokens[0], tuple(tokens[1:]))))
    return steps


def parse_plan(text: str) -> list[Step]:
    """The plan in `text`, as a list of steps (possibly empty)."""
    text = _THINK.sub(" ", text or "")
    for block in reversed(_FENCE.findall(text)):
        steps = _steps(block[0])
        if steps:
            return steps
    return _steps(text)
