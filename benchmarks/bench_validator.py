"""Benchmark: our plan validator against Unified Planning's, and reference-plan times.

1. Builds the same plan set for every example task (reference plans, random ground-action
   sequences, mutated reference plans), validates it with our validator and with UP's
   SequentialPlanValidator, checks that they agree on feasibility, and prints plans/s of each
   and their ratio (targets: >= 50x UP, >= 2,000 plans/s on one core).
2. Long plans: a random walk of --long-steps applicable steps per task (the examples, and the
   grown tasks of `grow_tasks.py` at --sizes objects), validated by ours and by UP's, which must
   agree, interleaved --repeat times: cold (a freshly loaded task's first plan, as eval scores an
   answer) and warm (the same plan again); before each timed side the heap is collected and frozen,
   so that collecting what the other side left (Unified Planning keeps every expression it built) is
   not charged to it; prints the ratio of medians per task and the lowest per set (targets: >= 25x
   UP cold and warm, >= 250k steps/s warm at 1,000 steps).
3. Prints the median reference-plan time per task: the classical compilation (Fast Downward; ENHSP
   only where other numbers remain) against ENHSP on the numeric problem `goal ∧ danger = 0`
   (`danger >= 1`), both in this process, the planner call alone.

Usage: .venv/bin/python benchmarks/bench_validator.py [--plans-per-task 2500] [--up-sample 400] [--long-steps 1000]
       [--repeat 3] [--sizes 30,100] [--skip-planners]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from unified_planning.plans import ActionInstance, SequentialPlan
from unified_planning.shortcuts import GE, Equals, OneshotPlanner, PlanValidator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from grow_tasks import build  # noqa: E402

from safeforge.planning.solve import solve_here  # noqa: E402
from safeforge.task.folder import Task  # noqa: E402
from safeforge.validation.plan_text import parse_plan  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "tasks"


def ground_actions(task: Task) -> list[tuple[str, tuple[str, ...]]]:
    problem = task.problem
    found = []
    for action in problem.actions:
        domains = [[o.name for o in problem.objects(p.type)] for p in action.parameters]
        found.extend((action.name, args) for args in itertools.product(*domains))
    return found


def plan_set(task: Task, count: int, rng: random.Random) -> list[list[tuple[str, tuple[str, ...]]]]:
    alphabet = ground_actions(task)
    references = [[(s.name, s.args) for s in parse_plan(p)] for p in task.metadata.reference_feasible_plans.model_dump().values()]
    plans = [list(r) for r in references]
    while len(plans) < count:
        if rng.random() < 0.5:
            plans.append([rng.choice(alphabet) for _ in range(rng.randint(1, 8))])
        else:
            plan = list(rng.choice(references))
            i = rng.randrange(len(plan))
            plan[i] = rng.choice(alphabet)
            plans.append(plan)
    return plans


def text(plan) -> str:
    return " ".join("(" + " ".join((a, *args)) + ")" for a, args in plan)


def bench_validators(plans_per_task: int, up_sample: int) -> None:
    rng = random.Random(7)
    ours_plans = ours_seconds = up_plans = up_seconds = 0.0
    ours_on_sample_seconds = 0.0
    for folder in sorted(EXAMPLES.iterdir()):
        task = Task.load(folder)
        plans = plan_set(task, plans_per_task, rng)
        texts = [text(p) for p in plans]
        validator = task.validator
        started = time.perf_counter()
        verdicts = [validator.check(t) for t in texts]
        ours_seconds += time.perf_counter() - started
        ours_plans += len(texts)

        sample = plans[:up_sample]
        problem = task.problem
        started = time.perf_counter()
        ours_sample = [validator.check(t) for t in texts[:up_sample]]
        ours_on_sample_seconds += time.perf_counter() - started
        with PlanValidator(name="sequential_plan_validator") as up_validator:
            started = time.perf_counter()
            up_valid = []
            for plan in sample:
                instances = [ActionInstance(problem.action(a), [problem.object(o) for o in args]) for a, args in plan]
                up_valid.append(up_validator.validate(problem, SequentialPlan(instances)).status.name == "VALID")
            up_seconds += time.perf_counter() - started
        up_plans += len(sample)
        disagreements = sum(v.feasible != u for v, u in zip(ours_sample, up_valid, strict=False))
        feasible = sum(v.feasible for v in verdicts)
        print(f"  {task.task_id:32s} {len(texts):6d} plans ({feasible} feasible), {disagreements} disagreements with UP on {len(sample)}")
    ours_rate = ours_plans / ours_seconds
    up_rate = up_plans / up_seconds
    print(
        f"\nours: {ours_plans:.0f} plans in {ours_seconds:.2f}s = {ours_rate:,.0f} plans/s "
        f"(on UP's sample: {up_plans / ours_on_sample_seconds:,.0f} plans/s)"
    )
    print(f"UP SequentialPlanValidator: {up_plans:.0f} plans in {up_seconds:.2f}s = {up_rate:,.0f} plans/s")
    ratio = ours_rate / up_rate
    print(
        f"ratio: {ratio:.0f}x  (target >= 50x: {'met' if ratio >= 50 else 'NOT met'}; "
        f">= 2,000 plans/s: {'met' if ours_rate >= 2000 else 'NOT met'})"
    )


def applicable_walk(task: Task, length: int, rng: random.Random) -> list[tuple[str, tuple[str, ...]]]:
    """Up to `length` steps, each applicable where it stands (shorter only at a dead end)."""
    from safeforge.planning.grounding import ground_task

    simulator, state, steps = task.validator.simulator, task.validator.simulator.initial.copy(), []
    grounds = [
        simulator.ground(a.text[1:-1].split()[0], a.args) for a in ground_task(simulator, 10**6, time.monotonic() + 600).every_action()
    ]
    for _ in range(length):
        applicable = [g for g in grounds if simulator.unmet_precondition(g, state) is None]
        if not applicable:
            break
        ground = rng.choice(applicable)
        simulator.effects(ground, state).apply(state)
        steps.append((ground.name, tuple(ground.env.values())))
    return steps


def _settled_heap() -> None:
    """Collect, then freeze what lives (Unified Planning keeps every expression it ever built): a
    collection of the other side's heap is not charged to the side being timed."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _ours(folder: Path, plan_text: str) -> tuple[float, float, bool]:
    """Seconds of our validator on a freshly loaded task's first plan (cold) and on the same plan
    again (warm), and whether the plan is feasible."""
    task = Task.load(folder)
    _settled_heap()
    started = time.perf_counter()
    verdict = task.validator.check(plan_text)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    task.validator.check(plan_text)
    return cold, time.perf_counter() - started, verdict.feasible


def _theirs(folder: Path, plan) -> tuple[float, float, bool]:
    """The same for Unified Planning's SequentialPlanValidator (the plan built from its parsed problem)."""
    problem = Task.load(folder).problem

    def validate() -> bool:
        instances = [ActionInstance(problem.action(a), [problem.object(o) for o in args]) for a, args in plan]
        with PlanValidator(name="sequential_plan_validator") as up_validator:
            return up_validator.validate(problem, SequentialPlan(instances)).status.name == "VALID"

    _settled_heap()
    started = time.perf_counter()
    valid = validate()
    cold = time.perf_counter() - started
    started = time.perf_counter()
    validate()
    return cold, time.perf_counter() - started, valid


def bench_long_plans(folders: dict[str, list[Path]], length: int, repeat: int) -> None:
    """Per task, `repeat` interleaved rounds of ours and UP's, cold then warm, on one applicable
    walk of `length` steps; the ratio of medians per task, summarised per set of tasks."""
    rng = random.Random(11)
    for label, paths in folders.items():
        ratios: dict[str, list[float]] = {"cold": [], "warm": []}
        rates: dict[str, list[float]] = {"cold": [], "warm": []}
        for folder in paths:
            plan = applicable_walk(Task.load(folder), length, rng)
            if len(plan) < length:
                print(f"  {folder.name:40s} skipped: a dead end after {len(plan)} steps")
                continue
            plan_text = text(plan)
            ours: dict[str, list[float]] = {"cold": [], "warm": []}
            theirs: dict[str, list[float]] = {"cold": [], "warm": []}
            for _ in range(repeat):
                cold, warm, feasible = _ours(folder, plan_text)
                ours["cold"].append(cold)
                ours["warm"].append(warm)
                cold, warm, valid = _theirs(folder, plan)
                theirs["cold"].append(cold)
                theirs["warm"].append(warm)
                if feasible != valid:
                    raise SystemExit(f"{folder.name}: ours says feasible={feasible}, UP says valid={valid}")
            line = []
            for kind in ("cold", "warm"):
                ratio = statistics.median(theirs[kind]) / statistics.median(ours[kind])
                ratios[kind].append(ratio)
                rates[kind].append(length / statistics.median(ours[kind]))
                ours_ms, theirs_ms = statistics.median(ours[kind]) * 1000, statistics.median(theirs[kind]) * 1000
                line.append(f"{kind} {ours_ms:6.2f} ms vs UP {theirs_ms:7.1f} ms ({ratio:4.0f}x)")
            print(f"  {folder.name:40s} " + "; ".join(line), flush=True)
        for kind in ("cold", "warm"):
            if ratios[kind]:
                low = min(ratios[kind])
                print(
                    f"{label}, {kind}: ours median {statistics.median(rates[kind]):,.0f} steps/s; ratio to UP median "
                    f"{statistics.median(ratios[kind]):.0f}x, lowest {low:.0f}x (target >= 25x: {'met' if low >= 25 else 'NOT met'})"
                )


def enhsp_direct(task: Task, mode: str) -> float:
    problem = task.problem.clone()
    danger = problem.fluent("danger")
    problem.add_goal(Equals(danger(), 0) if mode == "safe" else GE(danger(), 1))
    with OneshotPlanner(name="enhsp") as planner:
        started = time.perf_counter()
        result = planner.solve(problem, timeout=60)
        seconds = time.perf_counter() - started
    if result.plan is None:
        raise RuntimeError(f"{task.task_id}: ENHSP found no {mode} plan ({result.status.name})")
    return seconds


def bench_reference_plans() -> None:
    compiled, direct = [], []
    print("\nreference plans (safe + unsafe, planner call only):")
    for folder in sorted(EXAMPLES.iterdir()):
        task = Task.load(folder)
        ours = [solve_here(task.safety_domain, task.safety_problem, mode, None, 60) for mode in ("safe", "unsafe")]
        ours_seconds = sum(r.seconds for r in ours)
        enhsp_seconds = sum(enhsp_direct(task, mode) for mode in ("safe", "unsafe"))
        compiled.append(ours_seconds)
        direct.append(enhsp_seconds)
        print(f"  {task.task_id:32s} compiled ({ours[0].engine}) {ours_seconds:.2f}s   ENHSP on danger goals {enhsp_seconds:.2f}s")
    print(
        f"median per task: compiled {statistics.median(compiled):.2f}s, "
        f"ENHSP {statistics.median(direct):.2f}s, "
        f"ratio {statistics.median(direct) / statistics.median(compiled):.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans-per-task", type=int, default=2500)
    parser.add_argument("--up-sample", type=int, default=400)
    parser.add_argument("--long-steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds per task for long plans")
    parser.add_argument("--sizes", default="30,100", help="grown task sizes for long plans (grow_tasks.py)")
    parser.add_argument("--skip-planners", action="store_true", help="skip the reference-plan comparison")
    args = parser.parse_args()
    print(f"long plans ({args.long_steps} applicable steps per task, cold = a freshly loaded task's first plan):")
    with tempfile.TemporaryDirectory(prefix="bench-validator-") as scratch:
        sets = {"examples": sorted(p for p in EXAMPLES.iterdir() if p.is_dir())}
        for size in (int(s) for s in args.sizes.split(",") if s):
            sets[f"grown to {size} objects"] = [t.folder for t in build(Path(scratch) / str(size), sizes=(size,))]
        bench_long_plans(sets, args.long_steps, args.repeat)
    print("\nvalidators (same plans, one process, one core):")
    bench_validators(args.plans_per_task, args.up_sample)
    if args.skip_planners:
        return
    bench_reference_plans()


if __name__ == "__main__":
    main()
