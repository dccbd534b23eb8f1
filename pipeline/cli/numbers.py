"""Options that take a number: each has a range, checked as the option is read and named in its help."""

from __future__ import annotations

from typing import Any

from safeforge.common.ranges import Range


def number(range_: Range, help_text: str) -> dict[str, Any]:
    """`add_argument` keywords of an option in `range_`: out of it, argparse exits 2 naming the range."""
    return {"type": range_.option(), "help": f"{help_text}: {range_.describe()}"}
