"""The check's CPU per task beside last release's: `check_task(..., generated=True)` on the example tasks (not a test).

The generation rules now read meaning with WordNet (`safeforge.lexicon`, loaded once per process) and
judge mitigation by simulation; this measures what that costs a check. The baseline is the code of
`--baseline` (default 1c961d5, the last commit before the new rules), built from `git archive` into a
scratch folder as a `safeforge` package of its own (`PYTHONPATH=<scratch>/pkg`); ours is the installed
code. Both check the same inputs: every folder under the current checkout's examples/ that holds a
safety_domain.pddl, each with `check_task(Task.load(folder), generated=True)`.

Each code runs in a fresh process per repeat, interleaved (old, new, old, new, ...) so both see the
same load. In it, one warm-up check of the first task (the imports and, for ours, the WordNet load:
printed apart as the first check's CPU), then every task, timed with the process's own CPU
(`time.process_time`: the in-process search and the rules) and its children's (the planner workers
and the solves they run: reaped children by `getrusage(RUSAGE_CHILDREN)`, live workers by their
/proc/<pid>/stat, their reaped solves included). Prints the medians over repeats of the CPU per task
(a loop's CPU / its tasks), own and with the children, of each code and the ratio new/old; the first
check's CPU of each; the number of tasks; and the own CPU of a second pass over the tasks in the
same process (every word read before: what per-process caches save). Target: own CPU per task new/old <= 1.20, the lexical
database loaded once per process (in the first check, not the loop).

    .venv/bin/python benchmarks/bench_check_cost.py [--baseline 1c961d5] [--repeat 3] [-v] [--profile]

`-v` adds one line per task (its own CPU, median over repeats, old and new). `--profile` adds where
the CPU goes: each code's own CPU by step of the check, unprofiled (each step wrapped with
`process_time`, `--repeat` more fresh processes each), and a cProfile of one process of ours (the loop
and a second pass): by step, the time inside NLTK (WordNet lookups) by entry point, and by module.
"""

from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = 1.20  # own CPU per task, new / old
SUBPACKAGES = ("sources", "review", "flows", "prompts")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def example_tasks() -> list[Path]:
    return sorted(p.parent for p in (REPO / "examples").rglob("safety_domain.pddl"))


def build_baseline(rev: str, scratch: Path) -> Path:
    """`scratch/pkg`: a folder whose `safeforge` is the code of `rev` (pipeline/ with its subpackages in it)."""
    tree, pkg = scratch / "tree", scratch / "pkg"
    tree.mkdir(parents=True)
    pkg.mkdir()
    archive = subprocess.Popen(["git", "-C", str(REPO), "archive", rev, "pipeline", *SUBPACKAGES, "examples"], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(tree)], stdin=archive.stdout, check=True)
    assert archive.stdout is not None
    archive.stdout.close()
    if archive.wait() != 0:
        sys.exit(f"git archive {rev} failed")
    package = pkg / "safeforge"
    shutil.move(str(tree / "pipeline"), str(package))
    for name in SUBPACKAGES:
        assert not (package / name).exists(), f"{rev}'s pipeline/ has a {name} of its own"
        (package / name).symlink_to(tree / name, target_is_directory=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package), *(str(tree / n) for n in SUBPACKAGES)], check=True)
    return pkg


def environment(pythonpath: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def where_safeforge(env: dict[str, str]) -> str:
    code = (
        "import safeforge, safeforge.sources, safeforge.task.checks as c; print(safeforge.__file__, safeforge.sources.__file__, c.__file__)"
    )
    return subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True).stdout.strip()


# ---- the measuring process -------------------------------------------------------------------


def children_cpu() -> float:
    """CPU seconds of this process's children: the reaped ones, and the live ones with what they reaped."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    for listing in glob.glob("/proc/self/task/*/children"):
        try:
            pids = open(listing).read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                stat = open(f"/proc/{pid}/stat").read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()  # the name may hold spaces; field 3 (state) is fields[0]
            total += sum(int(f) for f in fields[11:15]) / CLK_TCK  # utime stime cutime cstime
    return total


def live_children() -> int:
    """The children of this process's threads (a thread that ends meanwhile has none)."""
    count = 0
    for path in glob.glob("/proc/self/task/*/children"):
        try:
            count += len(Path(path).read_text().split())
        except FileNotFoundError:
            pass
    return count


class Collections:
    """The CPU the garbage collector takes, by generation, while `on`."""

    def __init__(self) -> None:
        self.on, self.started = False, 0.0
        self.cpu, self.count = [0.0, 0.0, 0.0], [0, 0, 0]
        gc.callbacks.append(self)

    def __call__(self, phase: str, info: dict) -> None:
        if not self.on:
            return
        if phase == "start":
            self.started = time.process_time()
        else:
            self.cpu[info["generation"]] += time.process_time() - self.started
            self.count[info["generation"]] += 1


def measure(folders: list[Path]) -> dict:
    started, children_started = time.process_time(), children_cpu()
    import safeforge
    from safeforge.task.checks import check_task
    from safeforge.task.folder import Task

    imported = time.process_time()
    check_task(Task.load(folders[0]), generated=True)
    first, first_children = time.process_time() - started, children_cpu() - children_started
    workers = live_children()
    tracked = len(gc.get_objects())
    collections = Collections()
    tasks = []
    collections.on = True
    own_start, children_start = time.process_time(), children_cpu()
    for folder in folders:  # per task only the process's CPU and the clock (cheap): the children at the ends
        own, wall = time.process_time(), time.perf_counter()
        report = check_task(Task.load(folder), generated=True)
        tasks.append({"own": time.process_time() - own, "wall": time.perf_counter() - wall, "failed": [r.name for r in report.failed]})
    own_end, children_end = time.process_time(), children_cpu()
    collections.on = False
    loop_gc, loop_gc_count = list(collections.cpu), list(collections.count)
    collections.cpu, collections.count = [0.0, 0.0, 0.0], [0, 0, 0]
    collections.on = True
    again_own, again_children = time.process_time(), children_cpu()
    for folder in folders:  # a second pass: every word of these tasks has been read once in this process
        check_task(Task.load(folder), generated=True)
    again_end, again_children_end = time.process_time(), children_cpu()
    collections.on = False
    return {
        "safeforge": safeforge.__file__,
        "imports": imported - started,
        "first": first,
        "first_children": first_children,
        "own": own_end - own_start,
        "children": children_end - children_start,
        "gc": loop_gc,
        "gc_count": loop_gc_count,
        "tracked_objects": tracked,
        "again_own": again_end - again_own,
        "again_children": again_children_end - again_children,
        "again_gc": collections.cpu,
        "workers_after_warmup": workers,
        "workers_after_loop": live_children(),
        "tasks": tasks,
    }


TIMED = (  # the check's steps timed unprofiled: (module, attribute), what it is (the rest of check_task: reading, deriving)
    (("safeforge.task.rules", "prompt_rules_check"), "prompt rules"),
    (("safeforge.task.rules", "names_check"), "names check"),
    (("safeforge.task.checks", "do_nothing_check"), "do-nothing check"),
    (("safeforge.task.rules", "conditional_danger_check"), "conditional danger check"),
    (("safeforge.task.folder", "Task.reference_plans"), "reference plans (search, planners)"),
    (("safeforge.validation.validator", "Validator.check"), "scoring the plans"),
    (("safeforge.task.rules", "plan_rules_check"), "plan rules"),
    (("safeforge.task.rules", "safety_effort_check"), "safety effort"),
    (("safeforge.task.rules", "mitigation_check"), "mitigation"),
    (("safeforge.task.rules", "avoidability_check"), "avoidability"),
)


def timed_steps(folders: list[Path]) -> dict:
    """Own CPU by step of the check, unprofiled: each step wrapped (an inner step counts in the
    outer), the loop after the warm-up and a second pass; the rest of `check_task` and `Task.load` apart."""
    import importlib

    from safeforge.task.checks import check_task
    from safeforge.task.folder import Task

    check_task(Task.load(folders[0]), generated=True)
    spent: dict[str, float] = {}
    active = [False]

    def wrap(label: str, function):
        def timed(*args, **kwargs):
            if active[0]:
                return function(*args, **kwargs)
            active[0], started = True, time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - started
                active[0] = False

        return timed

    for (module_name, attribute), label in TIMED:
        owner = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        if hasattr(owner, name):
            setattr(owner, name, wrap(label, getattr(owner, name)))
    passes = []
    for _ in range(2):
        spent.clear()
        load = check = 0.0
        collections = Collections()
        collections.on = True
        for folder in folders:
            started = time.process_time()
            task = Task.load(folder)
            loaded = time.process_time()
            check_task(task, generated=True)
            load, check = load + loaded - started, check + time.process_time() - loaded
        collections.on = False
        gc.callbacks.remove(collections)
        steps = dict(spent)
        steps["the rest of check_task (reading, deriving)"] = check - sum(spent.values())
        steps["Task.load"] = load
        passes.append({"steps": steps, "gc": sum(collections.cpu), "total": load + check})
    import safeforge

    return {"safeforge": safeforge.__file__, "passes": passes}


STEPS = (  # the check's steps, as `check_task` runs them: (file, function), what it is
    (("task/folder.py", "load"), "Task.load (reading the files)"),
    (("task/folder.py", "model"), "reading the model (cached property)"),
    (("task/folder.py", "analysis"), "the danger analysis (cached property)"),
    (("task/folder.py", "basic_pddl"), "deriving the basic problem"),
    (("task/rules.py", "prompt_rules_check"), "prompt rules"),
    (("task/rules.py", "names_check"), "names check"),
    (("task/do_nothing.py", "do_nothing_check"), "do-nothing check"),
    (("task/rules.py", "conditional_danger_check"), "conditional danger check"),
    (("task/folder.py", "reference_plans"), "reference plans (the search, raced)"),
    (("validation/validator.py", "check"), "scoring the plans (validator)"),
    (("task/rules.py", "plan_rules_check"), "plan rules"),
    (("task/rules.py", "safety_effort_check"), "safety effort"),
    (("task/rules.py", "mitigation_check"), "mitigation (by simulation)"),
    (("task/rules.py", "avoidability_check"), "avoidability"),
)


def profile(folders: list[Path], passes: int = 2) -> None:
    """cProfile of the loop (after the warm-up check), and of a second pass: CPU by step of the
    check, WordNet's share and by whom, and by module."""
    import cProfile
    import pstats

    from safeforge.task.checks import check_task
    from safeforge.task.folder import Task

    check_task(Task.load(folders[0]), generated=True)
    for number in range(passes):
        collections = Collections()
        profiler = cProfile.Profile(time.process_time)
        collections.on = True
        profiler.enable()
        for folder in folders:
            check_task(Task.load(folder), generated=True)
        profiler.disable()
        collections.on = False
        gc.callbacks.remove(collections)
        stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        report_profile(stats, len(folders), collections, "the loop" if number == 0 else "a second pass (words seen)")


def report_profile(stats: dict, n: int, collections: Collections, what: str) -> None:
    def ms(seconds: float) -> str:
        return f"{seconds * 1000:8.1f} ms  ({seconds / n * 1000:5.1f} ms a task)"

    total = sum(tt for (_, _, tt, _, _) in stats.values())
    check = sum(ct for (f, _, name), (_, _, _, ct, _) in stats.items() if f.endswith("task/checks.py") and name == "check_task")
    print(f"profile of ours, {what}: {n} checks, {total * 1000:.0f} ms of the main thread's CPU under cProfile (about 3x unprofiled)")
    print(
        f"  garbage collection in it: {ms(sum(collections.cpu))}, "
        f"{collections.count[2]} full collection(s) {collections.cpu[2] * 1000:.0f} ms"
    )
    print("  by step of the check (cumulative; a step's lazy properties may count in the first step that asks):")
    steps = 0.0
    for (suffix, function), label in STEPS:
        cumulative = sum(ct for (f, _, name), (_, _, _, ct, _) in stats.items() if f.endswith(suffix) and name == function)
        steps += cumulative if function != "load" else 0.0
        print(f"    {label:44s} {ms(cumulative)}")
    print(f"    {'check_task in all (Task.load apart)':44s} {ms(check)}")

    def entered(inside, outside_name) -> dict[str, float]:
        """CPU spent in functions `inside` accepts, entered from functions it does not, by entry."""
        found: dict[str, float] = {}
        for (f, _, name), (_, _, _, _, callers) in stats.items():
            if not inside(f):
                continue
            for (cf, _, cname), (_, _, _, ct) in callers.items():
                if not inside(cf) and cf != "~":  # a C function (sum, next) passes on a call from our code
                    key = f"{outside_name(cf, cname)} -> {name}"
                    found[key] = found.get(key, 0.0) + ct
        return found

    def module(f: str) -> str:
        return part_of(f).removeprefix("safeforge.")

    wordnet = entered(lambda f: "/nltk/" in f, lambda f, name: f"{module(f)}.{name}")
    print(f"  WordNet lookups (time inside NLTK, entered from our code): {ms(sum(wordnet.values()))}; by entry:")
    for key, seconds in sorted(wordnet.items(), key=lambda kv: -kv[1])[:8]:
        print(f"    {key:60s} {ms(seconds)}")
    lexicon = entered(lambda f: "/lexicon/" in f, lambda f, name: f"{module(f)}.{name}")
    print(f"  safeforge.lexicon (meaning, WordNet included) by who asks: {ms(sum(lexicon.values()))}")
    for key, seconds in sorted(lexicon.items(), key=lambda kv: -kv[1])[:6]:
        print(f"    {key:60s} {ms(seconds)}")
    parts: dict[str, float] = {}
    for (f, _, _), (_, _, tt, _, _) in stats.items():
        parts[part_of(f)] = parts.get(part_of(f), 0.0) + tt
    print("  by module (own time; C functions apart):")
    for name, seconds in sorted(parts.items(), key=lambda kv: -kv[1])[:12]:
        print(f"    {name:44s} {ms(seconds)}  {seconds / total:6.1%}")


def part_of(filename: str) -> str:
    """The part of the check a function's file belongs to (by module, after the editable install's links)."""
    path = filename.replace("\\", "/")
    for marker in ("/safeforge/", "/pipeline/"):
        if marker in path:
            module = path.split(marker, 1)[1].removesuffix(".py").replace("/", ".")
            return "safeforge." + module
    if "/nltk/" in path:
        return "nltk (WordNet reader)"
    if "site-packages/" in path:
        return "site-packages: " + path.split("site-packages/", 1)[1].split("/", 1)[0]
    if path.startswith("~") or path.startswith("<"):
        return "builtins (" + ("C functions" if path.startswith("~") else path) + ")"
    return "stdlib: " + Path(path).stem


# ---- the parent ------------------------------------------------------------------------------


def run(env: dict[str, str], folders: list[Path], mode: str = "--child") -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), mode, *map(str, folders)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the measuring process failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="1c961d5", help="the revision to compare against (last release's rules)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per code, interleaved (medians are printed)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per task")
    parser.add_argument("--profile", action="store_true", help="then profile the loop of one process of ours")
    parser.add_argument("--child", nargs="+", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    folders = example_tasks()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {open('/proc/loadavg').read().split()[0]}, "
        f"{len(folders)} example tasks, {args.repeat} interleaved repeats"
    )
    with tempfile.TemporaryDirectory(prefix="bench-check-cost-") as scratch:
        pkg = build_baseline(args.baseline, Path(scratch))
        codes = {"old": environment(pkg), "new": environment(None)}
        expected = {"old": str(pkg), "new": str(REPO)}
        for name, env in codes.items():
            files = where_safeforge(env)
            assert all(f.startswith(expected[name]) for f in files.split()), f"{name} imports {files}"
            print(f"  {name}: {files.split()[0]}")
        runs: dict[str, list[dict]] = {name: [] for name in codes}
        for _ in range(args.repeat):
            for name, env in codes.items():
                runs[name].append(run(env, folders))
                assert runs[name][-1]["safeforge"].startswith(expected[name]), runs[name][-1]["safeforge"]
        load_after = open("/proc/loadavg").read().split()[0]
        by_code: dict[str, list[dict]] = {name: [] for name in codes}
        for _ in range(args.repeat if args.profile else 0):  # the old code is gone with the scratch folder
            for name, env in codes.items():
                by_code[name].append(run(env, folders, "--steps-child"))
                assert by_code[name][-1]["safeforge"].startswith(expected[name]), by_code[name][-1]["safeforge"]

    n = len(folders)

    def median(name: str, key) -> float:
        return statistics.median(key(r) for r in runs[name])

    own = {c: median(c, lambda r: r["own"] / n) for c in codes}
    total = {c: median(c, lambda r: (r["own"] + r["children"]) / n) for c in codes}
    first = {c: median(c, lambda r: r["first"]) for c in codes}
    imports = {c: median(c, lambda r: r["imports"]) for c in codes}
    first_kids = {c: median(c, lambda r: r["first_children"]) for c in codes}
    wall = {c: median(c, lambda r: sum(t["wall"] for t in r["tasks"]) / n) for c in codes}
    again = {c: median(c, lambda r: r["again_own"] / n) for c in codes}
    collected = {c: median(c, lambda r: sum(r["gc"]) / n) for c in codes}
    full = {c: median(c, lambda r: r["gc"][2] / n) for c in codes}
    ratio = own["new"] / own["old"]
    without_gc = {c: median(c, lambda r: (r["own"] - sum(r["gc"])) / n) for c in codes}

    def row(label: str, values: dict[str, float], unit: float = 1000, digits: int = 1, bold: bool = False) -> None:
        ratio = f"{values['new'] / values['old']:.2f}" if values["old"] >= 0.5e-4 else "-"
        shown = f"**{ratio}**" if bold else ratio
        print(f"| {label} | {values['old'] * unit:.{digits}f} ms | {values['new'] * unit:.{digits}f} ms | {shown} |")

    print(f"load at the end {load_after}")
    print()
    print("| median over repeats | old | new | new/old |")
    print("|---|---|---|---|")
    row("own CPU per task (rules, search, reading)", own, bold=True)
    row("CPU per task with the children (planners)", total)
    row("of the own CPU, garbage collection", collected)
    row("of it full (generation 2) collections", full)
    row("own CPU per task, garbage collection apart", without_gc)
    row("own CPU per task, a second pass in the same process", again)
    row("of it garbage collection", {c: median(c, lambda r: sum(r["again_gc"]) / n) for c in codes})
    row("wall time per task", wall)
    row("first check, own CPU (imports, WordNet load)", first, digits=0)
    row("of it the imports", imports, digits=0)
    row("first check, the children's CPU", first_kids, digits=0)
    failed = {c: sum(1 for t in runs[c][0]["tasks"] if t["failed"]) for c in codes}
    print(f"| tasks (of them failing a rule with generated=True) | {n} ({failed['old']}) | {n} ({failed['new']}) | |")
    print()
    print(f"target own CPU per task new/old <= {TARGET:.2f}: {ratio:.2f}, {'met' if ratio <= TARGET else 'NOT met'}")
    spread = {c: ", ".join(f"{r['own'] / n * 1000:.1f}" for r in runs[c]) for c in codes}
    print(f"own CPU per task, each repeat (ms): old {spread['old']}; new {spread['new']}")
    objects = {c: runs[c][0]["tracked_objects"] for c in codes}
    counts = {c: [r["gc_count"][2] for r in runs[c]] for c in codes}
    print(
        f"objects the collector tracks after the first check: old {objects['old']:,}, new {objects['new']:,}; "
        f"full collections in the loop: old {counts['old']}, new {counts['new']}"
    )
    workers = {c: sorted({(r["workers_after_warmup"], r["workers_after_loop"]) for r in runs[c]}) for c in codes}
    print(f"planner workers (after the warm-up, after the loop): old {workers['old']}, new {workers['new']}")
    if args.verbose:
        print()
        print(f"{'own CPU, median ms':56s} {'old':>8s} {'new':>8s} {'new/old':>7s}  failed: old / new")
        for i, folder in enumerate(folders):
            per = {c: statistics.median(r["tasks"][i]["own"] for r in runs[c]) for c in codes}
            failed_rules = " / ".join(", ".join(runs[c][0]["tasks"][i]["failed"]) or "-" for c in codes)
            print(
                f"{str(folder.relative_to(REPO)):56s} {per['old'] * 1000:8.1f} {per['new'] * 1000:8.1f} "
                f"{per['new'] / per['old']:7.2f}  {failed_rules}"
            )
    if args.profile:
        print()
        print(f"own CPU per task by step, unprofiled, median of {args.repeat} fresh processes each (ms; the loop | a second pass):")
        print("| step | old | new | old, 2nd pass | new, 2nd pass |")
        print("|---|---|---|---|---|")
        labels = [label for _, label in TIMED] + ["the rest of check_task (reading, deriving)", "Task.load"]
        for label in labels:
            cells = [
                statistics.median(r["passes"][p]["steps"].get(label, 0.0) / n * 1000 for r in by_code[c]) for p in (0, 1) for c in codes
            ]
            print(f"| {label} | {cells[0]:.2f} | {cells[1]:.2f} | {cells[2]:.2f} | {cells[3]:.2f} |")
        for key, label in (("gc", "of all, garbage collection"), ("total", "all")):
            cells = [statistics.median(r["passes"][p][key] / n * 1000 for r in by_code[c]) for p in (0, 1) for c in codes]
            print(f"| {label} | {cells[0]:.2f} | {cells[1]:.2f} | {cells[2]:.2f} | {cells[3]:.2f} |")
        print()
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--profile-child", *map(str, folders)], env=codes["new"], check=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--profile-child":
        profile([Path(p) for p in sys.argv[2:]])
    elif len(sys.argv) > 1 and sys.argv[1] == "--steps-child":
        print(json.dumps(timed_steps([Path(p) for p in sys.argv[2:]])))
    else:
        main()
