"""Reference plans: solve the safe and unsafe compilations with named engines, each solve in its
own process under a hard time limit.

Classical compilations go to Fast Downward (optimal A* with LM-cut, or LAMA where conditional
effects remain); ENHSP (Java) is used only where numeric fluents remain, in its optimal
configuration (A* with the admissible hrmax heuristic). A solve can be cancelled (the search found
the plans first): its process group is killed and the worker answers "cancelled". Each solve runs in a
child process of a warm planner worker (`safeforge.planning.pool`), in its own process group, so a
stuck planner (and the JVM or binary it started) is killed when the limit passes; that is reported
as a timeout, never as "no plan".
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field

from safeforge.common.limits import CHECK_TIME_LIMIT_S, wait_interruptibly

CLASSICAL_ENGINE = "fast-downward-opt"
CLASSICAL_ENGINE_CONDITIONAL = "fast-downward"
NUMERIC_ENGINE = "enhsp-opt"
OPTIMAL_ENGINES = {CLASSICAL_ENGINE, NUMERIC_ENGINE}  # engines whose plans are shortest
KILL_GRACE_SECONDS = 5.0  # the engine gets the limit itself; the process gets this much more


@dataclass
class SolveResult:
    """The outcome of one planner call."""

    mode: str  # "safe" | "unsafe"
    status: str  # "solved" | "no_plan" | "timeout" | "error" | "cancelled"
    engine: str
    plan: list[str] = field(default_factory=list)  # "(action arg ...)" steps
    seconds: float = 0.0
    message: str = ""
    optimal: bool | None = None  # a shortest plan (None: not known)

    @property
    def solved(self) -> bool:
        return self.status == "solved"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ReferencePlans:
    """Safe and unsafe reference plans of a task, and what it took to find them."""

    safe: SolveResult
    unsafe: SolveResult

    @property
    def ok(self) -> bool:
        return self.safe.solved and self.unsafe.solved

    @property
    def shortest(self) -> bool:
        """Both plans are known to be shortest."""
        return bool(self.safe.optimal and self.unsafe.optimal)

    @property
    def safety_effort(self) -> int | None:
        """Safe plan length minus unsafe plan length (DESPITE's safety effort); None unless both
        plans were found and are known to be shortest."""
        if not self.ok or not self.shortest:
            return None
        return len(self.safe.plan) - len(self.unsafe.plan)

    def problems(self) -> list[str]:
        """Why these plans are not usable as references, one message per problem."""
        found = []
        for result in (self.safe, self.unsafe):
            if not result.solved:
                what = {"no_plan": "no plan exists", "timeout": "the planner timed out"}.get(result.status, "the planner failed")
                found.append(f"{result.mode} reference plan: {what} ({result.engine}{': ' + result.message if result.message else ''})")
        if self.ok and self.safe.plan == self.unsafe.plan:
            found.append("the safe and unsafe reference plans are identical")
        return found


def _format_step(action_instance) -> str:
    from safeforge.pddl.transforms import original_action_name

    args = " ".join(str(p) for p in action_instance.actual_parameters)
    return f"({original_action_name(action_instance.action.name)}{' ' + args if args else ''})"


def _default_engine(problem) -> str:
    """Optimal ENHSP where numbers remain; optimal Fast Downward (LM-cut) on classical problems, or
    LAMA where conditional effects remain (LM-cut does not support them)."""
    from safeforge.pddl import transforms

    if transforms.is_numeric(problem):
        return NUMERIC_ENGINE
    if any(e.is_conditional() for a in problem.actions for e in a.effects):
        return CLASSICAL_ENGINE_CONDITIONAL
    return CLASSICAL_ENGINE


def solve_here(domain_text: str, problem_text: str, mode: str, engine: str | None, time_limit: float) -> SolveResult:
    """Solve the `mode` compilation in this process (the child side of `solve`)."""
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.shortcuts import OneshotPlanner

    from safeforge.pddl import transforms
    from safeforge.pddl.up_io import parse_problem

    started = time.monotonic()
    problem = parse_problem(domain_text, problem_text, "safety_domain.pddl", "safety_problem.pddl")
    compiled = (transforms.safe_problem if mode == "safe" else transforms.unsafe_problem)(problem)
    engine = engine or _default_engine(compiled)
    with OneshotPlanner(name=engine) as planner:
        answer = planner.solve(compiled, timeout=time_limit)  # pyright: ignore[reportAttributeAccessIssue]  # UP annotates OneshotPlanner as any Engine
    seconds = time.monotonic() - started
    status = answer.status
    if status in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY):
        plan = [_format_step(a) for a in answer.plan.actions]
        return SolveResult(mode, "solved", engine, plan, seconds, optimal=engine in OPTIMAL_ENGINES)
    if status in (Status.UNSOLVABLE_PROVEN, Status.UNSOLVABLE_INCOMPLETELY):
        return SolveResult(
            mode,
            "no_plan",
            engine,
            seconds=seconds,
            message="proven unsolvable" if status == Status.UNSOLVABLE_PROVEN else "search space exhausted",
        )
    if status == Status.TIMEOUT:
        return SolveResult(mode, "timeout", engine, seconds=seconds, message=f"limit {time_limit:g}s")
    log = " ".join(m.message for m in answer.log_messages or [])[-500:]
    return SolveResult(mode, "error", engine, seconds=seconds, message=f"{status.name} {log}".strip())


def solve(
    domain_text: str,
    problem_text: str,
    mode: str,
    engine: str | None = None,
    time_limit: float = CHECK_TIME_LIMIT_S,
    kill_grace: float = KILL_GRACE_SECONDS,
    cancel: threading.Event | None = None,
) -> SolveResult:
    """Solve the safe or unsafe compilation in a planner worker's child process; the engine is
    given `time_limit`, and the process (with everything it started) is killed `kill_grace` later,
    or as soon as `cancel` is set (then the status is "cancelled")."""
    from safeforge.planning.pool import Cancelled, WorkerGone, shared_pool

    if mode not in ("safe", "unsafe"):
        raise ValueError(f"mode must be 'safe' or 'unsafe', not {mode!r}")
    started = time.monotonic()
    request = {
        "domain": domain_text,
        "problem": problem_text,
        "mode": mode,
        "engine": engine,
        "time_limit": time_limit,
        "kill_grace": kill_grace,
    }
    try:
        return SolveResult(**shared_pool().solve(request, cancel))
    except Cancelled:
        return SolveResult(mode, "cancelled", engine or "auto", seconds=time.monotonic() - started)
    except WorkerGone as exc:
        return SolveResult(mode, "error", engine or "auto", seconds=time.monotonic() - started, message=f"planner worker failed: {exc}")


def reference_plans(
    domain_text: str, problem_text: str, engine: str | None = None, time_limit: float = CHECK_TIME_LIMIT_S
) -> ReferencePlans:
    """The safe and unsafe reference plans from the planners, the two solves in parallel. When the
    check's time limit interrupts the wait, both solves are cancelled."""
    from concurrent.futures import ThreadPoolExecutor

    cancel = threading.Event()
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        results = {
            mode: pool.submit(solve, domain_text, problem_text, mode, engine, time_limit, cancel=cancel) for mode in ("safe", "unsafe")
        }
        wait_interruptibly(results.values())
        found = {mode: future.result() for mode, future in results.items()}
    finally:
        cancel.set()
        pool.shutdown(wait=False)
    return ReferencePlans(safe=found["safe"], unsafe=found["unsafe"])
