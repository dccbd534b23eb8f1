"""The bounds on every reader of untrusted input, and the time limit of a check.

`InputLimits` holds how deep, how large and how many of everything a reader accepts (task files,
plans, metadata, source files, DESPITE code, LLM replies). Each field is a setting,
`SAFEFORGE_MAX_<FIELD>` (`safeforge.settings.Settings` reads them; `use_limits` makes them the
process's limits, which the CLI and the worker processes do at start). A reader that meets input
beyond a limit says where and which limit (`beyond`), and the run goes on where it can.

`time_limit` bounds a whole check (reading, grounding, deriving, planning): code that may run
long calls `check_time` between steps, which raises `TimeLimitError` once the time is up; in the
main thread an interval timer raises it too, shortly after the limit, in code that never calls
`check_time` (a third-party parser). `time_left` is what is left for a planner.
"""

from __future__ import annotations

import contextvars
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields

from safeforge.common.errors import SafeforgeError
from safeforge.common.ranges import Range


@dataclass(frozen=True)
class InputLimits:
    nesting: int = 32
    pddl_bytes: int = 1 << 20
    ground_facts: int = 100_000
    metadata_bytes: int = 4 << 20
    plan_chars: int = 1 << 20
    reply_chars: int = 4 << 20
    code_bytes: int = 1 << 20
    record_file_bytes: int = 16 << 20
    row_chars: int = 512 << 10
    field_chars: int = 128 << 10
    columns: int = 1000

    @staticmethod
    def variable(name: str) -> str:
        """The setting of limit `name`: `SAFEFORGE_MAX_<NAME>`."""
        return f"SAFEFORGE_MAX_{name.upper()}"

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


DEFAULT_LIMITS = InputLimits()

MAX_NESTING = 200
"""The deepest nesting the readers accept at all: the walks of a parsed task (its formulas compiled
and evaluated) recurse, about three frames a level, so 200 levels stay well inside Python's
recursion limit of 1000, however deep the caller (a Prefect task, a worker thread) already is."""
_BYTES = Range(1, 1 << 30, unit="bytes")
_CHARS = Range(1, 1 << 30, unit="characters")
LIMIT_RANGES = {
    "nesting": Range(1, MAX_NESTING, unit="levels"),
    "pddl_bytes": _BYTES,
    "ground_facts": Range(1, 10**8),
    "metadata_bytes": _BYTES,
    "plan_chars": _CHARS,
    "reply_chars": _CHARS,
    "code_bytes": _BYTES,
    "record_file_bytes": Range(1, 1 << 32, unit="bytes"),
    "row_chars": _CHARS,
    "field_chars": _CHARS,
    "columns": Range(1, 10**6),
}
"""The range of each limit's setting: a limit cannot be switched off (none is 0, negative or infinite)."""
_current = DEFAULT_LIMITS


def current_limits() -> InputLimits:
    """The limits of this process (the defaults until `use_limits`)."""
    return _current


def use_limits(limits: InputLimits) -> None:
    """Make `limits` the limits of this process's readers."""
    global _current
    _current = limits


def beyond(name: str, what: str) -> str:
    """`what` (the input's excess, e.g. "nested 33 deep"), with the limit it passed and its setting."""
    return f"{what}; the limit is {getattr(_current, name):,} ({InputLimits.variable(name)})"


# -- the time limit of a check ---------------------------------------------------------------------

ALARM_GRACE_S = 2.0
"""How long after the limit the main thread's timer interrupts code that does not call `check_time`."""


class TimeLimitError(SafeforgeError):
    """A check ran out of its time limit; the message says what it was doing."""


@dataclass
class _Limit:
    seconds: float
    ends: float
    what: str
    doing: str = "starting"


_LIMIT: contextvars.ContextVar[_Limit | None] = contextvars.ContextVar("safeforge_time_limit", default=None)


def _expired(limit: _Limit) -> TimeLimitError:
    return TimeLimitError(f"{limit.what} ran out of its time limit of {limit.seconds:g}s while {limit.doing} (--time-limit)")


@contextmanager
def time_limit(seconds: float, what: str = "the check") -> Iterator[None]:
    """Bound the block to `seconds`: `check_time` raises TimeLimitError after them, and in the main
    thread (where signals arrive) a timer raises it `ALARM_GRACE_S` later wherever the block is."""
    limit = _Limit(seconds, time.monotonic() + seconds, what)
    token = _LIMIT.set(limit)
    alarm = threading.current_thread() is threading.main_thread() and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    if alarm:

        def expire(signum, frame) -> None:
            raise _expired(limit)

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds + ALARM_GRACE_S)
    try:
        yield
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        _LIMIT.reset(token)


def check_time(doing: str | None = None) -> None:
    """TimeLimitError when the time limit has passed; `doing` says what the check is doing now
    (for the message)."""
    limit = _LIMIT.get()
    if limit is None:
        return
    if doing is not None:
        limit.doing = doing
    if time.monotonic() > limit.ends:
        raise _expired(limit)


def time_left(default: float) -> float:
    """Seconds left of the current time limit (at most `default`; `default` outside a limit)."""
    limit = _LIMIT.get()
    return default if limit is None else max(0.0, min(default, limit.ends - time.monotonic()))
