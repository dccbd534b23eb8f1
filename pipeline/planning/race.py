"""`find_reference_plans`: the in-process search raced against the planners.

The search (`safeforge.planning.search`) settles most tasks in milliseconds, so it runs alone for a
short head start of its own CPU time (on a busy machine, as much search as on an idle one; at most
`HEAD_START_WALL` times as long on the clock, for a search starved of CPU); if it has not settled
both plans by then, the planners start on the modes it has not settled, and the first answer wins:
- the search settles a mode: that mode's planner is cancelled (its process group killed);
- every planner still needed has answered: the search is stopped, and each mode keeps the search's
  plan where it has one, the planner's otherwise.
So a check costs at most the head start more than the planners alone, and usually far less. With
an engine named, the planners alone solve both modes. However the race ends (also when the check's
time limit interrupts it), every planner still running is cancelled.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from safeforge.common.limits import CHECK_TIME_LIMIT_S, check_time, wait_interruptibly
from safeforge.planning.search import shortest_plans
from safeforge.planning.solve import ReferencePlans, SolveResult, reference_plans, solve
from safeforge.validation.simulator import Simulator

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

# The search's CPU time alone, before the planners join: most tasks are settled by then (most
# 300-object ones too), and no planner answers sooner (starting one takes longer); on 2 CPUs, planners that
# joined sooner took CPU from searches about to settle, and doubled their time.
HEAD_START_S = 0.5
HEAD_START_WALL = 4  # the head start ends after this many times its length on the clock (2 s), whatever the CPU
_HEAD_START_POLL_S = 0.01
MODES = ("safe", "unsafe")


def find_reference_plans(
    sim: Simulator,
    domain_text: str,
    problem_text: str,
    engine: str | None = None,
    time_limit: float = CHECK_TIME_LIMIT_S,
    head_start: float = HEAD_START_S,
) -> ReferencePlans:
    """The safe and unsafe reference plans of the task `sim` simulates (whose PDDL texts are given
    for the planners), each from whichever of the search and the planners settles it first."""
    check_time("finding the reference plans")
    if engine is not None:
        return reference_plans(domain_text, problem_text, engine, time_limit)
    race = _Race(domain_text, problem_text, time_limit, head_start, time.pthread_getcpuclockid(threading.get_ident()))
    race.start()
    try:
        settled = shortest_plans(sim, time_budget=time_limit, stop=race.planners_done, on_settled=race.settled)
        return race.result(settled)
    finally:
        race.end()


class _Race:
    def __init__(self, domain_text: str, problem_text: str, time_limit: float, head_start: float, search_clock: int):
        self.domain_text, self.problem_text, self.head_start = domain_text, problem_text, head_start
        self._search_clock = search_clock  # the CPU clock of the thread that searches
        self.ends = time.monotonic() + time_limit  # a planner started late gets what is left
        self.planners_done = threading.Event()  # every mode the search has not settled has a planner's answer
        self._search_over = threading.Event()
        self._cancel = {mode: threading.Event() for mode in MODES}  # set once the search settled the mode
        self._futures: dict[str, Future[SolveResult]] = {}
        self._lock = threading.RLock()
        self._executor: ThreadPoolExecutor | None = None  # started with the first planner (most checks need none)
        self._timer = threading.Thread(target=self._after_head_start, daemon=True)

    def start(self) -> None:
        self._timer.start()

    def settled(self, mode: str) -> None:
        """The search settled `mode`: its planner, if any, is no longer needed."""
        self._cancel[mode].set()
        self._answered()

    def end(self) -> None:
        """No planner starts any more, and every one still running is cancelled."""
        with self._lock:
            self._search_over.set()
            for cancel in self._cancel.values():
                cancel.set()
        if self._executor is not None:
            self._executor.shutdown(wait=False)

    def _after_head_start(self) -> None:
        cpu_until = time.clock_gettime(self._search_clock) + self.head_start
        wall_until = time.monotonic() + self.head_start * HEAD_START_WALL
        while not self._search_over.wait(_HEAD_START_POLL_S):
            if time.clock_gettime(self._search_clock) >= cpu_until or time.monotonic() >= wall_until:
                self._start_planners(MODES)
                return

    def _start_planners(self, modes) -> None:
        from concurrent.futures import ThreadPoolExecutor

        with self._lock:
            for mode in modes:
                if mode not in self._futures and not self._cancel[mode].is_set():
                    if self._executor is None:
                        self._executor = ThreadPoolExecutor(max_workers=len(MODES), thread_name_prefix="planner")
                    left = max(0.0, self.ends - time.monotonic())
                    future = self._executor.submit(solve, self.domain_text, self.problem_text, mode, None, left, cancel=self._cancel[mode])
                    self._futures[mode] = future
                    future.add_done_callback(lambda _: self._answered())

    def _answered(self) -> None:
        with self._lock:
            needed = [mode for mode in MODES if not self._cancel[mode].is_set()]
            if needed and all(mode in self._futures and self._futures[mode].done() for mode in needed):
                self.planners_done.set()

    def result(self, settled: dict[str, SolveResult]) -> ReferencePlans:
        """Each mode from the search where it settled it, from its planner otherwise (started now
        if the search gave up before the head start was over)."""
        for mode in settled:
            self._cancel[mode].set()
        missing = [mode for mode in MODES if mode not in settled]
        self._start_planners(missing)
        wait_interruptibly(self._futures[mode] for mode in missing)
        found = {**settled, **{mode: self._futures[mode].result() for mode in missing}}
        return ReferencePlans(safe=found["safe"], unsafe=found["unsafe"])
