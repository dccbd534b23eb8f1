"""A machine under load, and the processes a command left behind: for the tests of the promise that
a time limit is kept in wall-clock time at any load, with no planner process left."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psutil

MARK = "SAFEFORGE_TEST_RUN"


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
