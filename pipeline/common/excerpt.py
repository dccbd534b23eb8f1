"""`excerpt`: the part of a long text around a point, saying how much was left out (a rejected LLM
reply is quoted back this way, never whole, so one reply cannot run up the next request)."""

from __future__ import annotations

EXCERPT_CHARS = 2000


def excerpt(text: str, at: int | None = None, width: int = EXCERPT_CHARS) -> str:
    """`text` itself when it has at most `width` characters; else the `width` characters around
    offset `at` (from the start when None), with a note on each side of what was left out."""
    if len(text) <= width:
        return text
    start = 0 if at is None else min(max(0, at - width // 2), len(text) - width)
    after = len(text) - start - width
    head = f"[... {start:,} characters left out ...]\n" if start else ""
    tail = f"\n[... {after:,} characters left out ...]" if after else ""
    return f"{head}{text[start : start + width]}{tail}"


def clip(text: str, width: int) -> str:
    """`text` on one line's budget: its first `width` characters, and how many more there were."""
    return text if len(text) <= width else f"{text[:width]} [... {len(text) - width:,} more characters]"
