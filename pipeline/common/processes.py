"""The one supervisor of long-running child processes (the local servers).

`spawn` starts a command in its own session with its output appended to a log and returns a
`ProcessRecord` (pid, start time, URL, log) that can be saved as JSON and read back by another
process; `wait_ready` polls until the process answers, failing with the end of its log when it
exits or takes too long; `stop` ends the process with its whole tree (descendants and anything
else in its session), TERM first, then KILL, and reports survivors. A record is matched to a live
process by pid AND start time, so a reused pid is never mistaken for it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from safeforge.common.errors import SafeforgeError

POLL_S = 0.25
STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class ProcessRecord:
    """A process `spawn` started: what it is and where it answers. Holds no secrets."""

    name: str
    pid: int
    create_time: float
    url: str
    log: str
    command: list[str]

    def process(self) -> psutil.Process | None:
        """The live process, if it is still this one (same start time, not a zombie)."""
        try:
            process = psutil.Process(self.pid)
            if abs(process.create_time() - self.create_time) > 0.5 or process.status() == psutil.STATUS_ZOMBIE:
                return None
            return process
        except psutil.Error:
            return None

    def is_running(self) -> bool:
        return self.process() is not None

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> ProcessRecord | None:
        """The record saved at `path`, or None when there is none (or it is unreadable)."""
        try:
            return cls(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            return None


def spawn(
    name: str, command: list[str], *, env: Mapping[str, str], log: Path, url: str, cwd: Path | None = None, user: str | None = None
) -> ProcessRecord:
    """Start `command` in a new session, stdin closed, stdout and stderr appended to `log`; as
    `user` when given (root only: e.g. a database server that refuses to run as root)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        out.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} starting {name}: {command[0]}\n".encode())
        out.flush()
        process = subprocess.Popen(
            command,
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            user=user,
            group=_primary_group(user) if user else None,
            extra_groups=[] if user else None,
        )
    return ProcessRecord(name, process.pid, psutil.Process(process.pid).create_time(), url, str(log), command)


def _primary_group(user: str) -> int:
    import pwd

    return pwd.getpwnam(user).pw_gid


def log_tail(path: str | Path, lines: int = 25) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def wait_ready(record: ProcessRecord, ready: Callable[[], bool], timeout: float, error: type[SafeforgeError] = SafeforgeError) -> None:
    """Poll `ready()` until it is true; `error` (with the log's end) when the process exits first,
    or when `timeout` seconds pass (the process is stopped then). `ready` may raise `error` itself."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not record.is_running():
            _reap(record.pid)
            raise error(f"{record.name} exited while starting; the end of {record.log}:\n{log_tail(record.log)}")
        try:
            if ready():
                return
        except error:
            stop(record)
            raise
        time.sleep(POLL_S)
    stop(record)
    raise error(
        f"{record.name} did not answer at {record.url} within {timeout:.0f}s (stopped it); the end of {record.log}:\n{log_tail(record.log)}"
    )


def _tree(process: psutil.Process) -> list[psutil.Process]:
    """The process, its descendants, and whatever else lives in its session."""
    found = {process.pid: process}
    try:
        found.update({child.pid: child for child in process.children(recursive=True)})
    except psutil.Error:
        pass
    for other in psutil.process_iter():
        try:
            if other.pid not in found and os.getsid(other.pid) == process.pid:
                found[other.pid] = other
        except (psutil.Error, OSError):
            continue
    return list(found.values())


def _signal_all(processes: list[psutil.Process], sig: int) -> None:
    for member in processes:
        try:
            member.send_signal(sig)
        except psutil.Error:
            pass


def _is_live(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _reap(pid: int) -> None:
    """Collect the exit status of our own child, so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def stop(record: ProcessRecord, grace: float = STOP_GRACE_S) -> list[int]:
    """End the process and its whole tree (TERM, then KILL after `grace` seconds); returns the
    pids still alive afterwards (none expected). A process already gone is fine."""
    process = record.process()
    if process is None:
        _reap(record.pid)
        return []
    tree = _tree(process)
    _signal_all(tree, signal.SIGTERM)
    _, alive = psutil.wait_procs(tree, timeout=grace)
    _signal_all(alive, signal.SIGKILL)
    _, alive = psutil.wait_procs(alive, timeout=grace)
    _reap(record.pid)
    return [p.pid for p in alive if _is_live(p)]
