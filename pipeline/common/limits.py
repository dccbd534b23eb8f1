"""The bounds on every reader of untrusted input, and the time limit of a check.

`InputLimits` holds how deep, how large and how many of everything a reader accepts (task files,
plans, metadata, source files, DESPITE code, LLM replies). Each field is a setting,
`SAFEFORGE_MAX_<FIELD>` (`limits_in` reads them, as `safeforge.settings.Settings` does; `use_limits`
makes them the process's limits, which the CLI and the worker processes do at start). A reader that
meets input beyond a limit says where and which limit (`beyond`), and the run goes on where it can.

`time_limit` bounds a whole check (reading, grounding, deriving, planning), in any thread: a timer
raises `TimeLimitError` in the thread running it when the time is up, wherever it is (our reader,
Unified Planning's, the search, a wait for a planner); `check_time` raises it too and names the
step the check is in (the error's message says it). `time_left` is what is left for a planner.
"""

from __future__ import annotations

import contextvars
import ctypes
import gc
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from types import FrameType
from typing import TYPE_CHECKING, Any

from safeforge.common.errors import SafeforgeError
from safeforge.common.ranges import Range

if TYPE_CHECKING:
    from concurrent.futures import Future


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


def limits_in(environ: Mapping[str, str]) -> InputLimits:
    """The limits `environ` sets (`SAFEFORGE_MAX_*`; an empty one counts as unset), each in its
    range: a bad value raises SafeforgeError naming the variable. Only these variables are read, so a
    bad value of another setting does not stop a command that does not use it."""
    values: dict[str, Any] = {}
    for name in InputLimits.names():
        variable = InputLimits.variable(name)
        if text := environ.get(variable, "").strip():
            try:
                values[name] = LIMIT_RANGES[name].parse(text)
            except ValueError:
                raise SafeforgeError(f"{variable}={text!r}: it must be {LIMIT_RANGES[name].describe()}") from None
    return InputLimits(**values)


def beyond(name: str, what: str) -> str:
    """`what` (the input's excess, e.g. "nested 33 deep"), with the limit it passed and its setting."""
    return f"{what}; the limit is {getattr(_current, name):,} ({InputLimits.variable(name)})"


# -- the time limit of a check ---------------------------------------------------------------------


CHECK_TIME_LIMIT_S = 60.0
"""The default time limit of a whole check of a task, in seconds."""
WAIT_SLICE_S = 0.02
"""The longest a wait under a time limit blocks at a time (`wait_interruptibly`)."""
RETRY_S = 0.1
"""How often the time limit's timer raises again while the block it ended still runs."""
LET_FINISH_POLL_S = 0.005
"""How often the timer looks again while the block runs code it lets finish first."""


class TimeLimitError(SafeforgeError):
    """A check ran out of its time limit; the message says what it was doing."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or _expired_message())


@dataclass
class _Limit:
    seconds: float
    ends: float
    what: str
    block: FrameType  # the frame running the `with time_limit(...)` block
    outer: _Limit | None = None
    doing: str = "reading the task"

    def expired(self) -> _Limit | None:
        """This limit or the first enclosing one whose time has passed (None: none has)."""
        now = time.monotonic()
        limit: _Limit | None = self
        while limit is not None and now <= limit.ends:
            limit = limit.outer
        return limit


_LIMIT: contextvars.ContextVar[_Limit | None] = contextvars.ContextVar("safeforge_time_limit", default=None)


def _running() -> _Limit | None:
    """This thread's innermost limit whose block still runs (one whose block was left without its
    exit, as an interruption at its very end can make it, is passed over)."""
    limit = _LIMIT.get()
    while limit is not None and not _on_stack(limit.block, sys._getframe()):
        limit = limit.outer
    return limit


def _on_stack(frame: FrameType, top: FrameType | None) -> bool:
    while top is not None and top is not frame:
        top = top.f_back
    return top is not None


def _expired_message() -> str:
    """What ran out of time, and doing what: the passed limit of this thread's check."""
    current = _running()
    limit = (current.expired() or current) if current is not None else None
    if limit is None:
        return "the check ran out of its time limit"
    return f"{limit.what} ran out of its time limit of {limit.seconds:g}s while {limit.doing} (--time-limit)"


def _raise_in(thread_id: int, error: type[BaseException] | None) -> None:
    """Have the thread `thread_id` raise `error` at its next Python instruction (None: withdraw a
    raise not yet delivered)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(error) if error else None)


def _ignore_interruptions_of_finalizers(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    """`sys.unraisablehook` that drops a TimeLimitError raised in a finalizer (where it cannot
    propagate: the timer raises it again) and hands anything else to `previous`."""

    def hook(unraisable: Any) -> None:
        if not issubclass(unraisable.exc_type, TimeLimitError):
            previous(unraisable)

    hook.quiet = True  # type: ignore[attr-defined]
    return hook


class _FrozenHeap:
    """The objects that existed when the first running time limit began, kept out of the cyclic
    garbage collector's passes until the last one ends (`gc.freeze`). A full pass is C code, out of a
    limit's reach, and over the heap of a process that imported much (a Prefect worker, the test
    suite) it took more than a second on busy CPUs; with the heap frozen, a pass reads only what
    the checks made since."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blocks = 0

    def enter(self) -> None:
        with self._lock:
            self._blocks += 1
            if self._blocks == 1:
                gc.freeze()

    def leave(self) -> None:
        with self._lock:
            self._blocks -= 1
            if self._blocks == 0:
                gc.unfreeze()


_FROZEN_HEAP = _FrozenHeap()


class time_limit:  # noqa: N801 - used as a function: `with time_limit(...)`
    """Bound the block to `seconds` (counted from `since`, a `time.monotonic()` time, or from now):
    `check_time` raises TimeLimitError once they passed, and a timer raises it in the thread
    running the block when they pass, wherever it is (a third-party reader, the search, a wait for a
    planner), so the block ends on time at any load; again every `RETRY_S` while the block runs
    (code that catches every exception may have swallowed it). An import in progress is let finish
    first (a module half run would stay broken for the life of the process), unless
    `interrupt_imports` says the process ends with the block. Limits nest (the first to pass raises).
    On Python 3.13 an error raised at a `while` loop's back edge skips the handlers of the loop's own
    frame (cpython#130279), so code that runs under a limit keeps such loops out of `try` and `with`."""

    def __init__(self, seconds: float, what: str = "the check", since: float | None = None, interrupt_imports: bool = False) -> None:
        if not 0 <= seconds < math.inf:
            raise SafeforgeError(f"{what}: a time limit is a finite number of seconds, at least 0, not {seconds!r}")
        self._ends = (time.monotonic() if since is None else since) + seconds
        self._seconds, self._what, self._interrupt_imports = seconds, what, interrupt_imports
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._fired = False

    def __enter__(self) -> None:
        if not getattr(sys.unraisablehook, "quiet", False):
            sys.unraisablehook = _ignore_interruptions_of_finalizers(sys.unraisablehook)
        self._block = sys._getframe(1)
        self._token = _LIMIT.set(_Limit(self._seconds, self._ends, self._what, self._block, _running()))
        self._thread = threading.get_ident()
        threading.Thread(target=self._watch, name="time-limit", daemon=True).start()
        _FROZEN_HEAP.enter()

    def _watch(self) -> None:
        if self._closed.wait(max(0.0, self._ends - time.monotonic())):
            return
        while True:
            with self._lock:
                where = self._where()
                if self._closed.is_set() or where == "left":
                    return
                if where == "block":
                    _raise_in(self._thread, TimeLimitError)
                    self._fired = True
            if self._closed.wait(RETRY_S if where == "block" else LET_FINISH_POLL_S):
                return

    def _where(self) -> str:
        """Where the thread is: in the "block", in code it lets finish first ("wait": the limit's own
        entry and exit, threading's own code, an import unless `interrupt_imports`), or "left"."""
        frame = sys._current_frames().get(self._thread)
        while frame is not None and frame is not self._block:
            code = frame.f_code
            importing = not self._interrupt_imports and code.co_filename.startswith(_IMPORTLIB)
            if code in _OWN_CODE or code.co_filename == _THREADING or importing:
                return "wait"
            frame = frame.f_back
        return "left" if frame is None else "block"

    def __exit__(self, *exc_info) -> None:
        with self._lock:
            self._closed.set()
            if self._fired:  # a raise not delivered yet must not escape the block
                _raise_in(self._thread, None)
        _LIMIT.reset(self._token)
        _FROZEN_HEAP.leave()


_OWN_CODE = (time_limit.__enter__.__code__, time_limit.__exit__.__code__)
# threading's own code takes no error from a limit: its locks, conditions and thread tables stay
# right only when nothing is raised inside it. On CPython 3.11 a thread being started carries its
# starter's id until it runs, so an error raised in the starter killed it unstarted and the starter
# waited forever; on 3.13 one raised in a Condition's wait (in `Thread.start`) made its `with`
# release the lock twice; one raised in `join` left the thread in threading's tables (a KeyError
# later, or a hang at exit). The error is raised once the thread is back in other code: a wait in
# short slices (`wait_interruptibly`) is ended by `check_time` between them.
_THREADING = threading.__file__
_IMPORTLIB = "<frozen importlib._bootstrap"


def check_time(doing: str | None = None) -> None:
    """TimeLimitError when the time limit has passed; `doing` says what the check is doing now
    (for the message)."""
    limit = _LIMIT.get()
    if limit is None:
        return
    if doing is not None:
        step: _Limit | None = limit
        while step is not None:
            step.doing, step = doing, step.outer
    if limit.expired() is not None and (running := _running()) is not None and running.expired() is not None:
        raise TimeLimitError


def wait_interruptibly(futures: Iterable[Future]) -> None:
    """Wait until every future is done, in short waits, so that the time limit's timer can
    interrupt it (a thread blocked in one long wait takes the interruption only when it wakes)."""
    from concurrent.futures import wait

    pending = set(futures)
    while pending:
        check_time()
        _, pending = wait(pending, timeout=WAIT_SLICE_S)


def time_left(default: float) -> float:
    """Seconds left of the current time limit (at most `default`; `default` outside a limit)."""
    limit, left = _running(), default
    while limit is not None:
        left, limit = min(left, limit.ends - time.monotonic()), limit.outer
    return max(0.0, left)


def process_started() -> float:
    """When this process started, as a `time.monotonic()` time (Linux; elsewhere: now), so that a
    command's time limit counts its start-up too."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])  # field 22: start time, clock ticks after boot
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        age = 0.0
    return time.monotonic() - max(0.0, age)
