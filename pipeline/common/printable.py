"""`printable`: text from input (hostile code's messages, source records, PDDL names) made safe to
print on a terminal: control characters (escape sequences included) and the invisible characters
that reorder text are shown as escapes, never acted on."""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str, keep: str = "") -> str:
    """`text` with every control or reordering character written as an escape (`\\x1b`, `\\n`,
    `\\u202e`), except those in `keep` (e.g. "\\n" for multi-line text)."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in keep:
            return char
        return repr(char)[1:-1] if ord(char) < 0x100 else f"\\u{ord(char):04x}"

    return _UNSAFE.sub(escape, text)
