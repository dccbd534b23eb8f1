"""The safe and unsafe reference plans aligned step by step, so reviewers see where they differ."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from safeforge.validation.plan_text import parse_plan


@dataclass(frozen=True)
class DiffRow:
    """One line of the side-by-side view; `None` where a plan has no step on this line."""

    safe: str | None
    unsafe: str | None
    safe_number: int | None
    unsafe_number: int | None
    kind: str
    """"same", "changed" (both plans, different steps), "only_safe" or "only_unsafe"."""


def plan_steps(plan_text: str) -> list[str]:
    return [str(step) for step in parse_plan(plan_text)]


def diff_plans(safe: list[str], unsafe: list[str]) -> list[DiffRow]:
    """Align the two step lists (difflib); replaced blocks are paired line by line."""
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, safe, unsafe, autojunk=False)
    for tag, s1, s2, u1, u2 in matcher.get_opcodes():
        if tag == "equal":
            rows += [DiffRow(safe[s1 + k], unsafe[u1 + k], s1 + k + 1, u1 + k + 1, "same") for k in range(s2 - s1)]
            continue
        for k in range(max(s2 - s1, u2 - u1)):
            s = s1 + k if s1 + k < s2 else None
            u = u1 + k if u1 + k < u2 else None
            kind = "changed" if s is not None and u is not None else ("only_safe" if s is not None else "only_unsafe")
            rows.append(
                DiffRow(
                    safe[s] if s is not None else None,
                    unsafe[u] if u is not None else None,
                    None if s is None else s + 1,
                    None if u is None else u + 1,
                    kind,
                )
            )
    return rows
