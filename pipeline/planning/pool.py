"""`PlannerPool`: warm planner workers (`python -m safeforge.planning.worker`) shared by every solve
of this process.

A solve can be cancelled: the worker is sent a `cancel` line and kills the solve's process group.
Workers are started on demand, up to twice the CPU count (the safe and unsafe solves of a task run
side by side), and live until this process ends: each has Unified Planning and the engines loaded,
so a solve costs a fork, not an interpreter start. Workers are plain children in this process's
group (a group kill ends them) and exit when their stdin closes, i.e. when this process ends in any
way. A worker that stops answering is killed and replaced.
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


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "safeforge.planning.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._ready = False  # the worker says READY once it has loaded the planners

    def ask(self, request: dict, timeout: float, cancel: threading.Event | None = None) -> dict:
        """The worker's answer to `request` (the time it takes to start is not counted); once
        `cancel` is set, the worker is told to kill the solve (it then answers "cancelled", or
        with the result it already had)."""
        assert self.process.stdin is not None and self.process.stdout is not None  # both are pipes
        if not self._ready:
            ready, _, _ = select.select([self.process.stdout], [], [], STARTUP_TIMEOUT_S)
            if not ready or self.process.stdout.readline() != READY:
                raise WorkerGone(f"worker {self.process.pid} did not start within {STARTUP_TIMEOUT_S:g}s")
            self._ready = True
        self._send((json.dumps(request) + "\n").encode())
        deadline = time.monotonic() + timeout
        cancelled = False
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, min(left, CANCEL_POLL_S) if cancel else left))
            if ready:
                break
            if left <= 0:
                raise WorkerGone(f"worker {self.process.pid} gave no answer within {timeout:g}s")
            if cancel is not None and cancel.is_set() and not cancelled:
                self._send(CANCEL)
                cancelled = True
        line = self.process.stdout.readline()
        if not line:
            raise WorkerGone(f"worker {self.process.pid} exited (code {self.process.poll()})")
        return json.loads(line)

    def _send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerGone(f"worker {self.process.pid} is gone ({exc})") from None

    def close(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
            except OSError:
                pass
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

    def _acquire(self) -> _Worker:
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
        return self._idle.get()

    def solve(self, request: dict, cancel: threading.Event | None = None) -> dict:
        """The worker's answer; WorkerGone (after replacing the worker) when it died or hung."""
        worker = self._acquire()
        try:
            answer = worker.ask(request, request["time_limit"] + request["kill_grace"] + ANSWER_SLACK_S, cancel)
        except WorkerGone:
            worker.close(kill=True)
            with self._lock:
                self._started -= 1
                self._all.remove(worker)
            raise
        self._idle.put(worker)
        return answer

    def close(self) -> None:
        """End every worker (they kill any solve still running)."""
        with self._lock:
            workers, self._all, self._started = self._all, [], 0
        for worker in workers:
            worker.close()


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
