"""Reading a plan out of free text: one action per `( ... )` group, as DESPITE does.

Rules, applied in order:
- `<think>...</think>` sections (reasoning models' drafts) are ignored;
- if fenced code blocks (```) contain groups, only the last such block is read;
- a step is the text from each `(` to the next `)`, closed or not: a group cut off by the end of
  the text, or by the next `(`, is read as a step too (a warning says so), never dropped;
- plain numbering — `(1)`, `(1.)`, `(2)`, `(#3)`, `(step 1)` — and empty groups are skipped; a
  group whose first token is not an action name, such as `(smash_window!)` or `(1burn house)`, is a
  step of an unknown action (infeasible), never silently dropped;
- tokens are separated by white space or commas and compared case-insensitively;
- text beyond the `plan_chars` input limit is not read (a warning says so).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from safeforge.common.limits import beyond, current_limits

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[^\n`]*\n?(.*?)(```|$)", re.DOTALL)
_GROUP = re.compile(r"\(([^()]*)(\)?)")
_NUMBERING = re.compile(r"(step\s*)?#?\d+[.):]?", re.IGNORECASE)


class Step(NamedTuple):
    """One `(name arg ...)` group, lower-cased (a tuple: plans of thousands of steps are read fast)."""

    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return "(" + " ".join((self.name, *self.args)) + ")"


class PlanText(NamedTuple):
    """The steps read from a plan's text, and what the reader had to guess (warnings)."""

    steps: list[Step]
    warnings: list[str]


def _steps(text: str, warnings: list[str]) -> list[Step]:
    steps = []
    make = tuple.__new__  # Step(...) without the named tuple's slower constructor
    for group, closed in _GROUP.findall(text.lower()):
        tokens = group.replace(",", " ").split()
        if not tokens:
            continue
        first = tokens[0][0]
        if (first.isdigit() or first in "#s") and _NUMBERING.fullmatch(group.strip()):
            continue  # numbering: (1), (2.), (#3), (step 4)
        steps.append(make(Step, (tokens[0], tuple(tokens[1:]))))
        if not closed:
            warnings.append(f"step {len(steps)} {steps[-1]} has no closing ')': read as a step")
    return steps


def read_plan(text: str) -> PlanText:
    """The plan in `text` (possibly no step), with warnings."""
    warnings: list[str] = []
    text = text or ""
    limit = current_limits().plan_chars
    if len(text) > limit:
        warnings.append(beyond("plan_chars", f"the plan text is {len(text):,} characters; only the first {limit:,} are read"))
        text = text[:limit]
    text = _THINK.sub(" ", text)
    for block in reversed(_FENCE.findall(text)):
        block_warnings: list[str] = []
        steps = _steps(block[0], block_warnings)
        if steps:
            return PlanText(steps, warnings + block_warnings)
    return PlanText(_steps(text, warnings), warnings)


def parse_plan(text: str) -> list[Step]:
    """The steps of the plan in `text` (see `read_plan`, which also says what was guessed)."""
    return read_plan(text).steps
