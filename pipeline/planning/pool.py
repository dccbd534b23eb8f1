"""`PlannerPool`: warm planner workers (`python -m safeforge.planning.worker`) shared by every solve
of this process.

A solve can be cancelled at any time, also while it waits for a worker to start or to be free
(`Cancelled`): a running one is ended by a `cancel` line, on which the worker kills the solve's
process group. Workers are started on demand, up to twice the CPU count (the safe and unsafe solves
of a task run side by side), and live until this process ends: each has Unified Planning and the
engines loaded, so a solve costs a fork, not an interpreter start. Workers are plain children in
this process's group (a group kill ends them) and exit when their stdin closes, i.e. when this
process ends in any way; at exit, one still loading is killed rather than waited for. A worker that
stops answering is killed and replaced.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import select
import subprocess
import sys
import threading
import time

ANSWER_SLACK_S = 15.0  # beyond the hard limit, before a silent worker is given up on
CANCEL_POLL_S = 0.02  # how often a solve that can be cancelled looks at its cancel event
CANCEL = b"cancel\n"  # the line that tells a worker to kill the solve it runs
READY = b"ready\n"  # the line a worker writes once it can take requests
STARTUP_TIMEOUT_S = 300.0  # loading Unified Planning and the engines, on a busy machine


class WorkerGone(Exception):
    """A worker died or stopped answering."""


class Cancelled(Exception):
    """The solve was cancelled before a worker took it."""


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "safeforge.planning.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._ready = False  # the worker says READY once it has loaded the planners

    @property
    def ready(self) -> bool:
        return self._ready

    def ask(self, request: dict, timeout: float, cancel: threading.Event | None = None) -> dict:
        """The worker's answer to `request` (the time it takes to start is not counted); once
        `cancel` is set, the worker is told to kill the solve (it then answers "cancelled", or
        with the result it already had), or, while it is still starting, Cancelled."""
        assert self.process.stdin is not None and self.process.stdout is not None  # both are pipes
        if not self._ready:
            if not self._wait_for_output(STARTUP_TIMEOUT_S, cancel):
                if cancel is not None and cancel.is_set():
                    raise Cancelled
                raise WorkerGone(f"worker {self.process.pid} did not start within {STARTUP_TIMEOUT_S:g}s")
            if self.process.stdout.readline() != READY:
                raise WorkerGone(f"worker {self.process.pid} did not start")
            self._ready = True
        self._send((json.dumps(request) + "\n").encode())
        deadline = time.monotonic() + timeout
        while not self._wait_for_output(deadline - time.monotonic(), cancel):
            if time.monotonic() >= deadline:
                raise WorkerGone(f"worker {self.process.pid} gave no answer within {timeout:g}s")
            self._send(CANCEL)  # cancelled: the worker answers once it has killed the solve
            cancel = None
        line = self.process.stdout.readline()
        if not line:
            raise WorkerGone(f"worker {self.process.pid} exited (code {self.process.poll()})")
        return json.loads(line)

    def _wait_for_output(self, seconds: float, cancel: threading.Event | None) -> bool:
        """Whether the worker wrote a line within `seconds`; False at once when `cancel` is set."""
        assert self.process.stdout is not None
        ends = time.monotonic() + seconds
        while not (cancel is not None and cancel.is_set()):
            left = ends - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, min(left, CANCEL_POLL_S) if cancel else left))
            if ready:
                return True
            if left <= 0:
                return False
        return False

    def _send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerGone(f"worker {self.process.pid} is gone ({exc})") from None

    def close(self, kill: bool = False) -> None:
        self.stop(kill)
        self.reap()

    def stop(self, kill: bool = False) -> None:
        """Kill the worker, or close its stdin (it then kills its solve and exits)."""
        if kill:
            self.process.kill()
        else:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
            except OSError:
                pass

    def reap(self) -> None:
        """Wait for the stopped worker to exit (killed when it does not)."""
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


class PlannerPool:
    """Up to `size` workers; `solve(request)` runs on an idle one (starting one when none is idle)."""

    def __init__(self, size: int):
        self.size = size
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._started = 0
        self._lock = threading.Lock()
        self._all: list[_Worker] = []

    def _acquire(self, cancel: threading.Event | None) -> _Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._started < self.size:
                self._started += 1
                worker = _Worker()
                self._all.append(worker)
                return worker
        while not (cancel is not None and cancel.is_set()):
            try:
                return self._idle.get(timeout=CANCEL_POLL_S if cancel else None)
            except queue.Empty:
                pass
        raise Cancelled

    def solve(self, request: dict, cancel: threading.Event | None = None) -> dict:
        """The worker's answer; WorkerGone (after replacing the worker) when it died or hung,
        Cancelled when `cancel` was set before a worker took the request."""
        worker = self._acquire(cancel)
        try:
            answer = worker.ask(request, request["time_limit"] + request["kill_grace"] + ANSWER_SLACK_S, cancel)
        except Cancelled:
            self._idle.put(worker)  # still starting: ready for the next solve
            raise
        except WorkerGone:
            worker.close(kill=True)
            with self._lock:
                self._started -= 1
                self._all.remove(worker)
            raise
        self._idle.put(worker)
        return answer

    def close(self) -> None:
        """End every worker (they kill any solve still running); one still starting is killed."""
        with self._lock:
            workers, self._all, self._started = self._all, [], 0
        for worker in workers:
            worker.stop(kill=not worker.ready)
        for worker in workers:
            worker.reap()


_pool: PlannerPool | None = None
_pool_lock = threading.Lock()


def shared_pool() -> PlannerPool:
    """This process's pool (created on first use, closed at exit)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = PlannerPool(2 * (os.cpu_count() or 1))
            atexit.register(_pool.close)
        return _pool
