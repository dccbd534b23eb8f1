"""A planner worker: `python -m safeforge.planning.worker`, started and fed by `safeforge.planning.pool`.

The worker imports Unified Planning and the engines once, says `ready` on stdout, then answers
requests read from stdin, one JSON line each, with one JSON line on stdout. For every request it forks a solver child into
its own session (so the planner, and the JVM or binary it starts, can be killed as a group), in a
scratch folder of its own (Fast Downward writes `output.sas` to the working directory); the child
dies with the worker (parent-death signal). The worker waits at most `time_limit + kill_grace`
seconds, then kills the child's whole group and every process below it (a planner's JVM runs in a
session of its own) and answers "timeout"; after every request it kills whatever the child left
behind (the worker is a child subreaper: orphans of a solve come back to it) and removes the
scratch folder. A `cancel` line on stdin during a
solve kills it the same way (the answer is "cancelled"). When its stdin closes (the process
that started it ended), it kills the running solve and exits without tearing down its modules (the
caller may be waiting for it): no planner outlives its caller; while it is still loading the
planners, a thread watching stdin ends it at once.

Because the worker is started with `-m`, its children never run the caller's `__main__`.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import asdict

from safeforge.planning.pool import CANCEL, READY
from safeforge.planning.solve import SolveResult, solve_here

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value)
    except (OSError, AttributeError):
        pass  # not Linux: the worker's kill after the limit still applies


def _die_with_parent() -> None:
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    """The direct children of `pid` (Linux /proc; none where it cannot be read)."""
    found = []
    try:
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/children") as listing:
                found += [int(child) for child in listing.read().split()]
    except OSError:
        pass
    return found


def _kill_tree(pid: int) -> None:
    """Kill the solve child's process group and every process below it, whatever group or session
    it made for itself (Unified Planning starts a planner such as ENHSP's JVM in a session of its
    own); processes orphaned on the way come back to this worker, a subreaper, and are killed by
    `_kill_leftovers`."""
    below, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            below.append(child)
            todo.append(child)
    for target in below:
        try:
            os.kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_leftovers() -> None:
    """Kill and reap every process still below this worker (none should outlive a solve)."""
    for child in _children(os.getpid()):
        _kill_tree(child)
        try:
            os.kill(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    while True:
        try:
            reaped, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if reaped == 0:
            return


def _child(request: dict, scratch: str, write_fd: int) -> None:
    """In the forked child: solve and write the result; never returns."""
    try:
        os.setsid()
        _die_with_parent()
        os.chdir(scratch)
        result = solve_here(request["domain"], request["problem"], request["mode"], request["engine"], request["time_limit"])
    except BaseException as exc:  # reported to the worker, never raised across the process boundary
        result = SolveResult(request["mode"], "error", request["engine"] or "auto", message=f"{type(exc).__name__}: {exc}")
    try:
        os.write(write_fd, json.dumps(asdict(result)).encode())
    finally:
        os._exit(0)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


class CallerGone(Exception):
    """The worker's stdin closed during a solve: the process that started it has ended."""


def handle(request: dict) -> dict:
    """Solve one request in a forked child under the hard limit; the answer as a dict. CallerGone,
    once the solve and everything below it are killed, when stdin closes meanwhile."""
    started = time.monotonic()
    limit = request["time_limit"] + request["kill_grace"]
    scratch = tempfile.mkdtemp(prefix="safeforge-solve-")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(request, scratch, write_fd)
    os.close(write_fd)
    try:
        watched = [read_fd, sys.stdin.fileno()]
        deadline = started + limit
        while True:
            ready, _, _ = select.select(watched, [], [], max(0.0, deadline - time.monotonic()))
            if sys.stdin.fileno() in ready:
                if not sys.stdin.buffer.readline():
                    raise CallerGone
                return asdict(  # a cancel line: the caller no longer needs this solve
                    SolveResult(request["mode"], "cancelled", request["engine"] or "auto", seconds=time.monotonic() - started)
                )
            if read_fd in ready:
                data = _read_all(read_fd)
                os.waitpid(pid, 0)
                if data:
                    return json.loads(data)
                return asdict(
                    SolveResult(
                        request["mode"],
                        "error",
                        request["engine"] or "auto",
                        seconds=time.monotonic() - started,
                        message="planner process died without a result",
                    )
                )
            if time.monotonic() >= deadline:
                return asdict(
                    SolveResult(
                        request["mode"],
                        "timeout",
                        request["engine"] or "auto",
                        seconds=time.monotonic() - started,
                        message=f"killed after the hard limit of {limit:g}s",
                    )
                )
    finally:
        _kill_tree(pid)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        _kill_leftovers()
        os.close(read_fd)
        shutil.rmtree(scratch, ignore_errors=True)


def _exit_when_stdin_closes(until: threading.Event) -> None:
    """Until `until` is set, end the process as soon as stdin's writer closes it (the caller is
    gone: loading the planners takes seconds, and no request can come). Reads nothing: a request
    already written stays for the main loop."""
    poller = select.poll()
    poller.register(sys.stdin.fileno(), 0)  # POLLHUP and POLLERR only: data waiting is not an event
    while not until.is_set():
        if poller.poll(100):
            os._exit(0)


def main() -> None:
    loaded = threading.Event()
    watcher = threading.Thread(target=_exit_when_stdin_closes, args=(loaded,), daemon=True)
    watcher.start()
    import unified_planning.shortcuts  # noqa: F401  (loaded once here, shared by every forked solve)

    import safeforge.pddl.up_io  # noqa: F401  (silences Unified Planning's credits)

    _prctl(PR_SET_CHILD_SUBREAPER, 1)  # what a solve leaves behind comes back here, to be killed
    loaded.set()  # from here the main loop sees stdin close, and kills a running solve first
    watcher.join()

    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    try:
        for line in sys.stdin.buffer:
            if line == CANCEL:
                continue  # it came after the answer to the solve it cancels
            answer = handle(json.loads(line))
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
    except CallerGone:
        pass  # `handle` killed the solve
    # The caller is gone and waits for this exit: skip tearing down the loaded planners' modules
    # (most of a second on a busy machine) once the solve and everything below it are gone.
    os._exit(0)


if __name__ == "__main__":
    main()
