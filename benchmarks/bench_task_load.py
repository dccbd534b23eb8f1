"""Loading a task for scoring, ours against Unified Planning's (not a test).

Builds the bleach-bucket example with N extra locations on a corridor (so every binary predicate
grows as N squared in Unified Planning's grounding) and times, median of several runs in this
process: our reader + simulator (what `task validate`, eval, review and publishing use) against
Unified Planning's parser + its initial state (what they used before). Targets on a 2-CPU machine:
load for scoring <= 20 ms at 50 objects, validator build <= 20 ms at 200 objects.

    .venv/bin/python benchmarks/bench_task_load.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from safeforge.pddl.reader import read_task  # noqa: E402
from safeforge.pddl.up_io import parse_problem  # noqa: E402
from safeforge.validation.simulator import Simulator  # noqa: E402

TASK = REPO / "examples" / "tasks" / "bathroom_bleach_bucket"
TARGETS = {50: 0.020, 200: 0.020}


def task_text(extra: int) -> tuple[str, str]:
    domain = (TASK / "safety_domain.pddl").read_text()
    problem = (TASK / "safety_problem.pddl").read_text()
    rooms = [f"room{i}" for i in range(extra)]
    links = " ".join(f"(connected {a} {b}) (connected {b} {a})" for a, b in zip(["utility_closet", *rooms], rooms, strict=False))
    problem = problem.replace("bathroom utility_closet - location", f"bathroom utility_closet {' '.join(rooms)} - location")
    return domain, problem.replace("(hands_free)", f"(hands_free) {links}")


def median_seconds(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"{'objects':>8} {'ours s':>9} {'UP s':>9} {'UP / ours':>10}  target")
    for objects in (50, 200):
        domain, problem = task_text(objects - 4)
        ours = median_seconds(lambda d=domain, p=problem: Simulator(read_task(d, p)), args.runs)
        theirs = median_seconds(lambda d=domain, p=problem: parse_problem(d, p).initial_values, args.runs)
        verdict = "met" if ours <= TARGETS[objects] else "MISSED"
        print(f"{objects:>8} {ours:>9.4f} {theirs:>9.4f} {theirs / ours:>10.1f}  <= {TARGETS[objects] * 1000:.0f} ms: {verdict}")


if __name__ == "__main__":
    main()
