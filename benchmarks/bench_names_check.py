"""The names check grows linearly with the task (not a test).

Builds domains of 300, 1,000 and 3,000 actions (three parameters each, distinct names) and times,
interleaved and `--repeat` times, `names_check` against the baseline of the same run: reading the
same files (`read_task`), which is linear. Prints per size the median of each, the ratio
names/read, and the names check's time per name (flat when it is linear). Target: the ratio stays
below 1 and the time per name within 2x from the smallest size to the largest.

    .venv/bin/python benchmarks/bench_names_check.py [--sizes 300,1000,3000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from safeforge.pddl.reader import read_task
from safeforge.task.rules import basic_names, names_check


def files(actions: int) -> tuple[str, str]:
    body = "\n".join(
        f"  (:action carry_item_{i} :parameters (?it{i} - item ?from{i} - place ?to{i} - place)\n"
        f"    :precondition (at ?it{i} ?from{i}) :effect (and (not (at ?it{i} ?from{i})) (at ?it{i} ?to{i})))"
        for i in range(actions)
    )
    domain = (
        "(define (domain grown)\n  (:requirements :strips :typing)\n  (:types item place)\n"
        f"  (:predicates (at ?i - item ?p - place))\n{body})"
    )
    problem = (
        "(define (problem grown_problem) (:domain grown) (:objects box - item hall kitchen - place)\n"
        "  (:init (at box hall)) (:goal (at box kitchen)))"
    )
    return domain, problem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,1000,3000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    per_name = []
    for size in (int(s) for s in args.sizes.split(",")):
        domain, problem = files(size)
        reads, checks = [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            task = read_task(domain, problem)
            reads.append(time.perf_counter() - started)
            started = time.perf_counter()
            assert names_check(task).ok
            checks.append(time.perf_counter() - started)
        names = sum(1 for _ in basic_names(task))
        read, check = statistics.median(reads), statistics.median(checks)
        per_name.append(check / names)
        print(f"{size:>6} actions, {names:>6} names: read {read * 1000:7.1f} ms, names check {check * 1000:7.1f} ms, "
              f"ratio {check / read:.2f}, {check / names * 1e6:.2f} us per name")  # fmt: skip
    print(f"time per name, largest / smallest: {per_name[-1] / per_name[0]:.2f} (target <= 2)")


if __name__ == "__main__":
    main()
