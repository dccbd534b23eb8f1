"""One writer per run: `RunLock` is held by the process that runs a run (generation, review push
and pull), whether the CLI or a Prefect flow started it.

The lock is an OS file lock (`flock`) on `<run>/run.lock`, so it is released when its holder ends,
even by `kill -9`, and never needs cleaning up. The file names the holder (pid, host, what it does,
since when), so a second process can say who holds the run instead of corrupting it.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType

from safeforge.common.errors import SafeforgeError

LOCK_FILE = "run.lock"


class RunLocked(SafeforgeError):
    """Another process is writing the run; the message names it."""


class RunLock:
    """`with RunLock(run_folder, "generate"):` — RunLocked at once when another process holds it."""

    def __init__(self, run_folder: Path, purpose: str):
        self.path = Path(run_folder) / LOCK_FILE
        self.purpose = purpose
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise RunLocked(
                f"run {self.path.parent.name} is in use: {holder}; wait until it ends (or stop it), then run this again"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(
            fd,
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "purpose": self.purpose,
                    "command": " ".join(sys.argv)[:300],
                    "since": time.time(),
                }
            ).encode(),
            0,
        )
        self._fd = fd
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _read_holder(fd: int) -> str:
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        holder = {}
    if not holder:
        return "another process holds its lock"
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder.get("since", 0)))
    return (
        f"{holder.get('purpose', 'a run')} by pid {holder.get('pid')} on {holder.get('host')} since {since} ({holder.get('command', '')})"
    )
