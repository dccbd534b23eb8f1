"""A machine under load, the baseline a timing test measures its promise against, and the processes
a command left behind: for the tests of the promise that a time limit is kept in wall-clock time at
any load, with no planner process left.

A timing test (marker `timing`, run by scripts/test.sh as a step of its own) promises "within the
limit plus a second": the second is a second of CPU at this machine's speed of the moment, measured
in the same run (`cpu_second_now`, before and after what is timed). A behaviour test never reads
the clock: it waits for a state with `eventually`, whose bound only turns a hang into a failure."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psutil

MARK = "SAFEFORGE_TEST_RUN"
HANG_S = 120.0
"""How long `eventually` waits for a state before it calls the wait a hang (no promise of speed)."""


def extreme_load() -> bool:
    """Whether other work keeps more than four processes per CPU waiting (a shared machine at its
    worst, where a fresh Python process takes seconds to import its modules)."""
    return os.getloadavg()[0] > 4 * (os.cpu_count() or 1)


@contextmanager
def busy_cpus() -> Iterator[None]:
    """One `while True: pass` process per CPU for the duration of the block (killed after)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        time.sleep(0.3)  # every hog is spinning
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def cpu_second_now(cpu_seconds: float = 0.2) -> float:
    """Wall-clock seconds that one second of this thread's CPU takes right now (at least 1.0): a
    fixed workload, a spin of `cpu_seconds` of CPU time, timed on the clock. On a quiet machine 1.0;
    with two CPU burners on two CPUs about 1.5; on a shared machine at its worst, several."""
    wall, cpu = time.monotonic(), time.thread_time()
    while time.thread_time() - cpu < cpu_seconds:
        pass
    return max(1.0, (time.monotonic() - wall) / (time.thread_time() - cpu))


class Promise:
    """ "Within `limit` plus `grace` seconds", the grace counted in seconds of CPU at this machine's
    speed (`cpu_second_now`), measured when the promise is made and again when it is judged; the
    slower of the two counts."""

    def __init__(self, limit: float, grace: float = 1.0) -> None:
        self.limit, self.grace = limit, grace
        self.before = cpu_second_now()

    def assert_kept(self, seconds: float) -> None:
        after = cpu_second_now()
        scale = max(self.before, after)
        bound = self.limit + self.grace * scale
        assert seconds <= bound, (
            f"{seconds:.2f}s, beyond {self.limit:g}s + {self.grace:g} s of CPU ({scale:.2f} s each now: {bound:.2f}s); "
            f"load {os.getloadavg()[0]:.1f}"
        )


def eventually(condition: Callable[[], object], what: str, timeout: float = HANG_S, every: float = 0.05) -> None:
    """Wait until `condition()` is true; a wait beyond `timeout` fails as a hang, naming `what`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still not so after {timeout:g} s")
        time.sleep(every)


async def eventually_async(condition: Callable[[], object], what: str, timeout: float = HANG_S, every: float = 0.05) -> None:
    """`eventually` for a coroutine: the event loop runs while it waits."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still not so after {timeout:g} s")
        await asyncio.sleep(every)


def is_running(process: psutil.Process | int) -> bool:
    """Whether a process runs: neither gone nor a zombie (ended, not yet reaped by its parent; an
    orphan stays one where the container's first process reaps none)."""
    try:
        return (process if isinstance(process, psutil.Process) else psutil.Process(process)).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def marked_env() -> dict[str, str]:
    """This process's environment with a mark of its own, which every process started under it inherits."""
    return {**os.environ, MARK: uuid.uuid4().hex}


def left_behind(env: dict[str, str], grace: float = 0.5) -> list[str]:
    """The live processes carrying `env`'s mark (those a command started and did not end), after
    `grace` seconds for those already killed to go; each killed, and described."""
    mark = f"{MARK}={env[MARK]}".encode()
    deadline = time.monotonic() + grace
    while True:
        found = []
        for process in psutil.process_iter():
            try:
                with open(f"/proc/{process.pid}/environ", "rb") as environ:
                    if mark in environ.read().split(b"\0") and is_running(process):
                        found.append(process)
            except (OSError, psutil.Error):
                pass
        if not found or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    described = []
    for process in found:
        try:
            described.append(f"{process.pid} {' '.join(process.cmdline())[:120]}")
            process.kill()
        except psutil.Error:
            pass
    return described
