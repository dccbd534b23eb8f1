"""A big domain read once: `safeforge task check` on a 3,000-action domain (not a test).

The domain is the bleach-bucket example with 3,000 more actions (about 700 KB, as a generator or a
hostile user may write). Interleaved `--repeat` times, each in a fresh process, its CPU time
(user + sys, the planner processes it waited for included):
- ours: `safeforge task check` on the folder, as a user runs it;
- `python -c pass`: the interpreter's start alone;
- Unified Planning's reader: `PDDLReader().parse_problem` on the same two files (its import included).
Prints the medians and the ratios (target: the check in <= 2 s of CPU).

    .venv/bin/python benchmarks/bench_big_domain.py [--actions 3000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "tasks" / "bathroom_bleach_bucket"
TARGET_CPU_S = 2.0
sys.path.insert(0, str(REPO))
from tests.slow_tasks import add_idle_actions  # noqa: E402  (the grown domain of the time-limit tests)

UP_READER = "import sys; from unified_planning.io import PDDLReader; PDDLReader().parse_problem(sys.argv[1], sys.argv[2])"


def big_task(folder: Path, actions: int) -> Path:
    """The example with `actions` extra actions that change nothing (its plans still hold)."""
    shutil.copytree(EXAMPLE, folder)
    add_idle_actions(folder, actions)
    return folder


def cpu_of(command: list[str]) -> float:
    """CPU seconds (user + sys) of `command` and the children it waited for; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repeats (medians are printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-big-domain-") as scratch:
        folder = big_task(Path(scratch) / "task", args.actions)
        size = (folder / "safety_domain.pddl").stat().st_size
        commands = {
            "ours": [str(Path(sys.executable).with_name("safeforge")), "task", "check", str(folder), "--time-limit", "60"],
            "python -c pass": [sys.executable, "-c", "pass"],
            "UP reader": [sys.executable, "-c", UP_READER, str(folder / "safety_domain.pddl"), str(folder / "safety_problem.pddl")],
        }
        seconds: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, command in commands.items():
                seconds[name].append(cpu_of(command))
        load = os.getloadavg()[0]
    median = {name: statistics.median(values) for name, values in seconds.items()}
    print(f"{args.actions:,} extra actions ({size / 1000:,.0f} KB domain), {args.repeat} interleaved repeats, load {load:.1f}")
    for name, values in seconds.items():
        print(f"  {name:15s} CPU median {median[name]:6.2f} s  ({', '.join(f'{v:.2f}' for v in values)})")
    ours, bare, reader = median["ours"], median["python -c pass"], median["UP reader"]
    print(
        f"ours / python -c pass: {ours / bare:.1f}x; ours / UP's reader: {ours / reader:.2f}x; "
        f"target <= {TARGET_CPU_S:g} s of CPU: {'met' if ours <= TARGET_CPU_S else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
