"""Parsing untrusted JSON within the nesting limit (`safeforge.common.limits`)."""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from safeforge.common.limits import beyond, current_limits

_STRING = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'  # a JSON string on one line (escapes included)
# strings (skipped whole, so brackets inside them do not count), brackets, and line ends
_STRUCTURE = re.compile(_STRING + r"|[\[\]{}]|\n")
_STRINGS = re.compile(_STRING)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
WHOLE_TEXT_CHARS = 1 << 20
"""Texts up to this length are checked whole (several times faster; the copy it makes is small)."""


class JSONRefused(ValueError):
    """Text that is not usable JSON: `line` is where, `message` what is wrong."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line, self.message = line, message


def load_json(text: str) -> Any:
    """The value `text` holds; JSONRefused when it is not JSON or nests beyond the limit."""
    check_nesting(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONRefused(exc.lineno, f"invalid JSON: {exc.msg}") from None
    except RecursionError:  # unreachable within the nesting limit; kept for a limit set very high
        raise JSONRefused(1, beyond("nesting", "nested too deeply to read")) from None


def check_nesting(text: str) -> None:
    """JSONRefused (with the line) when the brackets of `text` nest beyond the limit."""
    limit = current_limits().nesting
    if text.count("[") + text.count("{") <= limit:
        return
    if len(text) <= WHOLE_TEXT_CHARS:  # the depth from the brackets outside strings, found by the regex engine
        brackets = _NOT_BRACKET.sub("", _STRINGS.sub("", text))
        if max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0) <= limit:
            return
    depth, line = 0, 1  # token by token: finds the line, and stops at the first bracket too deep without copying the text
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif token in ("[", "{"):
            depth += 1
            if depth > limit:
                raise JSONRefused(line, beyond("nesting", f"brackets nested more than {limit} deep"))
        elif token in ("]", "}"):
            depth -= 1
