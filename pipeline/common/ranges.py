"""The range of every number a user gives: command-line options, settings, flows' parameters.

A `Range` says its bounds in words (`describe`), checks a value (`check`: `RangeError` naming the
range), declares an option (`argument`: an argparse type whose error names the range, and the help
naming it) and gives the pydantic field of a setting or parameter (`field`). Every range is finite and excludes
NaN, so no number a user gives can disarm a limit (a negative memory cap, an infinite time limit).
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass
from typing import Any

from safeforge.common.errors import SafeforgeError


class RangeError(SafeforgeError):
    """A number outside its range (the message names the range)."""


@dataclass(frozen=True)
class Range:
    low: float
    high: float
    whole: bool = True  # a whole number (else any finite number)
    low_open: bool = False  # `low` itself excluded
    unit: str = ""

    def describe(self) -> str:
        """The range in words: "a whole number from 1 to 65535", "a number of seconds > 0 and <= 86400"."""
        kind = "a whole number" if self.whole else "a number"
        unit = f" of {self.unit}" if self.unit else ""
        return f"{kind}{unit} {'' if self.low_open else 'from '}{self.bounds()}"

    def bounds(self) -> str:
        """The bounds alone: "1 to 65535", "> 0 and <= 86400"."""
        low, high = _show(self.low), _show(self.high)
        return f"> {low} and <= {high}" if self.low_open else f"{low} to {high}"

    def holds(self, value: float) -> bool:
        if isinstance(value, bool) or (self.whole and not isinstance(value, int)):
            return False
        if not math.isfinite(value):
            return False
        return (self.low < value if self.low_open else self.low <= value) and value <= self.high

    def check(self, value: float, what: str) -> Any:
        """`value`, or RangeError: "`what` is `value`: it must be <the range>"."""
        if not self.holds(value):
            raise RangeError(f"{what} is {value!r}: it must be {self.describe()}")
        return value

    def parse(self, text: str | float) -> int | float:
        """The number `text` says (or `text` itself, a number), or ValueError naming the range."""
        value: Any = text
        if isinstance(text, str):
            try:
                value = int(text) if self.whole else float(text)
            except ValueError:
                value = math.nan
        elif not self.whole and isinstance(text, int) and not isinstance(text, bool):
            value = float(text)
        if not self.holds(value):
            raise ValueError(f"{text!r} is not {self.describe()}")
        return value

    def argument(self, help_text: str) -> dict[str, Any]:
        """`add_argument` keywords of an option in this range: out of it, argparse exits 2 naming the
        range, which the help says too."""
        return {"type": self.option(), "help": f"{help_text}: {self.describe()}"}

    def option(self) -> _Option:
        """An argparse `type` for this range."""
        return _Option(self)

    def constraints(self) -> dict[str, Any]:
        """The pydantic `Field` constraints of this range."""
        low = {"gt" if self.low_open else "ge": int(self.low) if self.whole else self.low}
        return {**low, "le": int(self.high) if self.whole else self.high, **({} if self.whole else {"allow_inf_nan": False})}

    def field(self, *default: Any, **options: Any) -> Any:
        """A pydantic `Field` in this range (a model's field, or `Annotated[int, R.field()]` for a flow's parameter)."""
        from pydantic import Field  # here: the readers' limits use ranges without loading pydantic

        return Field(*default, **options, **self.constraints())


@dataclass(frozen=True)
class _Option:
    """The argparse type of a `Range` (the range stays readable, for the test that walks every option)."""

    range: Range

    def __call__(self, text: str) -> int | float:
        try:
            return self.range.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    @property
    def __name__(self) -> str:  # argparse names the type in some messages
        return "number"


def _show(number: float) -> str:
    return f"{number:g}" if not float(number).is_integer() else f"{int(number)}"


def machine_memory_mb() -> int:
    """This machine's memory in MiB (the largest memory cap that means anything)."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20


DAY_S = 86_400
SECONDS = Range(0, DAY_S, whole=False, low_open=True, unit="seconds")
"""A time limit or a timeout: more than 0, at most a day."""
MEMORY_MB = Range(1, machine_memory_mb(), unit="MiB")
"""A memory cap: at least 1 MiB, at most this machine's memory."""
PORT = Range(1, 65535)
ANY_PORT = Range(0, 65535)
"""A port, or 0: any free port."""
SEED = Range(0, 2**32 - 1)
RECORDS = Range(0, 10**9)
"""A number of records (or tasks) to skip or keep."""
SAMPLE = Range(1, 10**9)
TEMPERATURE = Range(0, 2, whole=False)
SHARE = Range(0, 1, whole=False, low_open=True)
"""A share of something: more than 0, at most all of it."""
