"""Checks that scale with the scene: `check_task` on grown tasks of 10, 30, 100 and 300 objects (not a test).

Grows the tasks with `grow_tasks.py` (the examples, the AI2-THOR-scene tasks and DESPITE's demo
tasks as imported, classical and numeric), then for every task, interleaved and `--repeat` times:
- ours: `check_task` as the product runs it (the in-process search raced against the planners);
- the baseline of the same run: the same check with the planners alone (the search off, the
  default engines: Fast Downward's optimal A*, LAMA where conditional effects remain, optimal
  ENHSP where numbers remain).
Each repeat also times a fixed Python workload (`work_unit`; its median time is printed), so a
check's time is read in units of it, measured in the same run at the same load. Prints per size the
median check time of each, checks per minute, the worst check in units, the worst ratio
ours/planners of any task, and the plan lengths against an optimal planner's (the baseline's own
plans where its engine is optimal; optimal ENHSP, which takes conditional effects, where it is
LAMA). Targets on a 2-CPU machine: >= 400 checks/min at 30 objects, >= 60/min at 100; each check
<= 2 units at 100 objects and <= 6 at 300; never slower than the planners.

    .venv/bin/python benchmarks/bench_check_scale.py [--despite DIR] [--sizes 10,30,100,300] [--repeat 3] [--time-limit 60] [-v]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from grow_tasks import SIZES, GrownTask, build  # noqa: E402

from safeforge.planning.solve import OPTIMAL_ENGINES, ReferencePlans, reference_plans  # noqa: E402
from safeforge.task.checks import CheckReport, check_task  # noqa: E402
from safeforge.task.folder import Task  # noqa: E402

TARGETS = {30: 400, 100: 60}  # checks per minute
UNIT_TARGETS = {100: 2.0, 300: 6.0}  # each check, in work units


def work_unit() -> float:
    """Seconds of a fixed Python workload (dict updates and a sort: the kind of work a check does)."""
    started = time.perf_counter()
    counts: dict[int, int] = {}
    for i in range(400_000):
        counts[i % 1009] = counts.get(i % 1009, 0) + i * i
    sorted(str(i) for i in range(200_000))
    return time.perf_counter() - started


OPTIMAL_FALLBACK = "enhsp-opt"


def timed_check(folder: Path, time_limit: float, planners_alone: bool) -> tuple[float, CheckReport]:
    task = Task.load(folder)
    if planners_alone:
        task.reference_plans = lambda engine=None, time_limit=time_limit: reference_plans(  # type: ignore[method-assign]
            task.safety_domain, task.safety_problem, None, time_limit
        )
    started = time.perf_counter()
    report = check_task(task, time_limit=time_limit)
    return time.perf_counter() - started, report


def optimal_lengths(folder: Path, baseline: CheckReport | None, time_limit: float) -> tuple[int, int] | str:
    """(safe, unsafe) lengths of an optimal planner's plans, or why there are none."""
    plans = baseline.plans if baseline is not None else None
    if plans is None or not all(r.engine in OPTIMAL_ENGINES for r in (plans.safe, plans.unsafe)):
        task = Task.load(folder)
        plans = reference_plans(task.safety_domain, task.safety_problem, OPTIMAL_FALLBACK, time_limit)
    if not plans.ok:
        return "; ".join(plans.problems())
    return len(plans.safe.plan), len(plans.unsafe.plan)


def describe(plans: ReferencePlans | None) -> str:
    if plans is None:
        return "no plans"
    return f"{plans.safe.engine}/{len(plans.safe.plan)} {plans.unsafe.engine}/{len(plans.unsafe.plan)} effort {plans.safety_effort}"


def bench_size(tasks: list[GrownTask], repeat: int, time_limit: float, verbose: bool) -> None:
    ours_medians, base_medians, ratios, in_units, unit_times = [], [], [], [], []
    equal = longer = unknown = failed = 0
    worst = ("", 0.0)
    for grown in tasks:
        ours, base, units = [], [], []
        report = baseline = None
        for _ in range(repeat):
            unit = work_unit()
            unit_times.append(unit)
            seconds, report = timed_check(grown.folder, time_limit, planners_alone=False)
            ours.append(seconds)
            units.append(seconds / unit)
            seconds, baseline = timed_check(grown.folder, time_limit, planners_alone=True)
            base.append(seconds)
        assert report is not None
        ours_median, base_median = statistics.median(ours), statistics.median(base)
        in_units.append((statistics.median(units), grown.folder.name))
        ours_medians.append(ours_median)
        base_medians.append(base_median)
        if report.plans is not None:  # a task refused before planning (too large) compares nothing
            ratio = ours_median / base_median
            ratios.append(ratio)
            if ratio > worst[1]:
                worst = (grown.folder.name, ratio)
        optimal = optimal_lengths(grown.folder, baseline, time_limit)
        plans = report.plans
        if not report.ok or plans is None:
            failed += 1
            verdict = "check failed: " + "; ".join(r.detail for r in report.failed)[:160]
        elif isinstance(optimal, str):
            unknown += 1
            verdict = f"optimal planner: {optimal[:120]}"
        elif (len(plans.safe.plan), len(plans.unsafe.plan)) == optimal:
            equal += 1
            verdict = "lengths = optimal"
        else:
            longer += 1
            verdict = f"lengths {len(plans.safe.plan)}/{len(plans.unsafe.plan)} vs optimal {optimal[0]}/{optimal[1]}"
        if verbose:
            print(
                f"    {grown.family:8s} {grown.folder.name:48s} ours {ours_median * 1000:8.1f} ms ({in_units[-1][0]:.2f} units)  "
                f"planners {base_median * 1000:8.1f} ms  "
                f"({describe(plans)}; {verdict})",
                flush=True,
            )
    size = tasks[0].objects
    ours_total, base_total = sum(ours_medians), sum(base_medians)
    rate = 60 * len(tasks) / ours_total
    target = TARGETS.get(size)
    verdict = "" if target is None else f"target >= {target}/min: {'met' if rate >= target else 'NOT met'}"
    print(
        f"{size:4d} objects, {len(tasks):3d} tasks: check median {statistics.median(ours_medians) * 1000:8.1f} ms "
        f"(planners alone {statistics.median(base_medians) * 1000:8.1f} ms); {rate:7.0f} checks/min "
        f"(planners alone {60 * len(tasks) / base_total:5.0f}/min) {verdict}"
    )
    most, slowest = max(in_units)
    unit_target = UNIT_TARGETS.get(size)
    unit_verdict = "" if unit_target is None else f"; target each <= {unit_target:g}: {'met' if most <= unit_target else 'NOT met'}"
    print(
        f"      in work units (one: {statistics.median(unit_times) * 1000:.0f} ms): "
        f"median {statistics.median(u for u, _ in in_units):.2f}, worst {most:.2f} ({slowest}){unit_verdict}",
        flush=True,
    )
    print(
        f"      worst ratio ours/planners {worst[1]:.2f} ({worst[0]}), median ratio {statistics.median(ratios):.3f}; "
        f"plan lengths: {equal} equal to the optimal planner's, {longer} differ, {unknown} without an optimal plan, {failed} checks failed",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--despite", type=Path, help="a DESPITE checkout: its demo_tasks/ are imported and grown")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--repeat", type=int, default=3, help="paired repeats per task (medians are printed)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="the check's limit per planner call")
    parser.add_argument("--family", help="only tasks of this family (examples, scene, despite)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per task")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    with tempfile.TemporaryDirectory(prefix="bench-check-scale-") as scratch:
        grown = build(Path(scratch) / "tasks", args.despite, sizes)
        if args.family:
            grown = [t for t in grown if t.family == args.family]
        print(f"{len(grown)} grown tasks ({sum(t.numeric for t in grown)} numeric), {args.repeat} paired repeats each")
        for size in sizes:
            tasks = [t for t in grown if t.objects == size]
            if tasks:
                bench_size(tasks, args.repeat, args.time_limit, args.verbose)


if __name__ == "__main__":
    main()
