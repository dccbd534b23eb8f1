"""Start-up cost of the command line (not a test).

Times whole commands in fresh processes, each the median of several runs, against a baseline
measured in the same run: the interpreter starting and exiting (`python -c pass`). Targets on a
2-CPU machine: `safeforge --help` <= 0.5 s, `safeforge task validate` of one plan on an example
task <= 1.0 s and `safeforge task check` of a small example task (a copy) <= 0.3 s. Also prints
peak memory (ru_maxrss of the child).

    .venv/bin/python benchmarks/bench_cli.py [--runs 7]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TASK = REPO / "examples" / "tasks" / "bathroom_bleach_bucket"
TARGETS = {"safeforge --help": 0.5, "safeforge task validate (one plan)": 1.0, "safeforge task check (small task)": 0.3}


def timed(command: list[str], runs: int) -> tuple[float, float]:
    """Median wall seconds and the largest peak RSS (MB) of `command` over `runs` runs."""
    seconds, peak = [], 0.0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=REPO)
        seconds.append(time.perf_counter() - start)
        peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)
    return statistics.median(seconds), peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    safeforge = [sys.executable, "-m", "safeforge.cli"]
    plan = "(pick_up_bucket red_bucket bathroom) (fill_with_water red_bucket bathroom)"
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as scratch:
        copy = shutil.copytree(TASK, Path(scratch) / TASK.name)
        commands = {
            "python -c pass (baseline)": [sys.executable, "-c", "pass"],
            "safeforge --help": [*safeforge, "--help"],
            "safeforge task validate (one plan)": [*safeforge, "task", "validate", str(TASK), "--plan", plan],
            "safeforge task check (small task)": [*safeforge, "task", "check", str(copy)],
        }
        baseline = None
        print(f"{'command':<38}{'median s':>10}{'x baseline':>12}{'peak MB':>9}  target")
        for name, command in commands.items():
            median, peak = timed(command, args.runs)
            baseline = baseline or median
            target = TARGETS.get(name)
            verdict = "" if target is None else f"<= {target} s: {'met' if median <= target else 'MISSED'}"
            print(f"{name:<38}{median:>10.3f}{median / baseline:>12.1f}{peak:>9.0f}  {verdict}")


if __name__ == "__main__":
    main()
