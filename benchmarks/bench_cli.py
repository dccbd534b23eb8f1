"""Start-up cost of the command line (not a test).

Times whole commands in fresh processes, each the median of several runs, against a baseline
measured in the same run: the interpreter starting and exiting (`python -c pass`). Targets on a
2-CPU machine: `safeforge --help` <= 0.5 s, `safeforge task validate` of one plan on an example
task <= 1.0 s and `safeforge task check` of a small example task (a copy) <= 0.3 s, with the
bytecode `scripts/setup.sh` writes (compiled here first, as setup does). The check is also timed
without a bytecode cache (every module compiled, as a first run after a module changed: an empty
`-X pycache_prefix` each time; no target). Prints wall and CPU (user + sys) medians, peak memory
(ru_maxrss of the child) and the load.

    .venv/bin/python benchmarks/bench_cli.py [--runs 7]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import safeforge as package

REPO = Path(__file__).resolve().parents[1]
TASK = REPO / "examples" / "tasks" / "bathroom_bleach_bucket"
TARGETS = {"safeforge --help": 0.5, "safeforge task validate (one plan)": 1.0, "safeforge task check (small task)": 0.3}


def timed(command: list[str], scratch: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + sys) and peak RSS (MB) of one run of `command` (a
    `{cache}` in it becomes a new empty folder)."""
    cache = tempfile.mkdtemp(dir=scratch)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([part.replace("{cache}", cache) for part in command], check=True, capture_output=True, cwd=REPO)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, max(after.ru_maxrss, before.ru_maxrss) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    compileall.compile_dir(Path(package.__file__).parent, quiet=1)  # as setup does
    safeforge = [sys.executable, "-m", "safeforge.cli"]
    uncached = [sys.executable, "-X", "pycache_prefix={cache}", "-m", "safeforge.cli"]
    plan = "(pick_up_bucket red_bucket bathroom) (fill_with_water red_bucket bathroom)"
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as scratch:
        copy = shutil.copytree(TASK, Path(scratch) / TASK.name)
        commands = {
            "python -c pass (baseline)": [sys.executable, "-c", "pass"],
            "safeforge --help": [*safeforge, "--help"],
            "safeforge task validate (one plan)": [*safeforge, "task", "validate", str(TASK), "--plan", plan],
            "safeforge task check (small task)": [*safeforge, "task", "check", str(copy)],
            "  the same, no bytecode cache": [*uncached, "task", "check", str(copy)],
        }
        load = os.getloadavg()[0]
        runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):  # interleaved, so a change of load touches every command alike
            for name, command in commands.items():
                runs[name].append(timed(command, Path(scratch)))
        load = max(load, os.getloadavg()[0])
    print(f"{args.runs} interleaved runs, load up to {load:.1f}")
    print(f"{'command':<38}{'wall s':>8}{'CPU s':>8}{'x baseline':>12}{'peak MB':>9}  target (wall)")
    baseline = statistics.median(wall for wall, _, _ in runs["python -c pass (baseline)"])
    for name, results in runs.items():
        wall, cpu = statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)
        target = TARGETS.get(name.strip())
        verdict = "" if target is None else f"<= {target} s: {'met' if wall <= target else 'MISSED'}"
        print(f"{name:<38}{wall:>8.3f}{cpu:>8.3f}{wall / baseline:>12.1f}{max(r[2] for r in results):>9.0f}  {verdict}")


if __name__ == "__main__":
    main()
