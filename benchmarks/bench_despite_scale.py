"""DESPITE scale: N tasks (default 12,279, DESPITE's count) checked and published (not a test).

Makes N task folders from the example tasks (renamed copies, each with its own problem name so no
two are duplicates), as the accepted tasks of one run, then times, in this process:
- the check stage (`check_task`: structure, reference plans, validator agreement) on every task,
  against a baseline measured in the same run: the planners alone (the in-process search skipped)
  on a sample;
- scoring: the reference plans of every task through the validator (steps per second);
- publishing all N tasks (re-validation, parquet, archive, card).
Each figure is printed with its projection to 12,279 tasks and the target on a 2-CPU machine
(checks >= 400 tasks/min, 12,279 checked <= 30 min, publish <= 10 min).

    .venv/bin/python benchmarks/bench_despite_scale.py [--tasks 12279] [--sample 16]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline.planning.solve import reference_plans  # noqa: E402
from pipeline.publishing import publish  # noqa: E402
from pipeline.runs.ledger import RunStore  # noqa: E402
from pipeline.task.checks import check_task, record_check  # noqa: E402
from pipeline.task.folder import Task  # noqa: E402
from pipeline.validation.plan_text import parse_plan  # noqa: E402

EXAMPLES = sorted(p for p in (REPO / "examples" / "tasks").iterdir() if p.is_dir())
DESPITE_TASKS = 12_279
PATH_TO_ACCEPTED = ("extracted", "checked", "in_review", "accepted")


def make_run(root: Path, count: int) -> RunStore:
    store = RunStore(root)
    rows = []
    for number in range(count):
        example = EXAMPLES[number % len(EXAMPLES)]
        task_id = f"{example.name}_{number:05d}"
        folder = store.task_dir(task_id)
        shutil.copytree(example, folder)
        problem = (folder / "safety_problem.pddl").read_text()
        (folder / "safety_problem.pddl").write_text(re.sub(r"\(problem (\S+)\)", rf"(problem \1_{number})", problem, count=1))
        metadata = json.loads((folder / "metadata.json").read_text())
        metadata["task_id"] = task_id
        metadata["provenance"] = {"source": "neiss", "record_id": f"neiss_{number}", "run": store.name}
        metadata["review"] = {"decision": "accepted", "final_rule": "single", "annotations": [{"annotator": "a@x", "decision": "accept"}]}
        (folder / "metadata.json").write_text(json.dumps(metadata))
        rows.append((f"neiss_{number}", task_id))
    store.ledger.register([(record_id, "neiss", f"bench.csv:row {n}") for n, (record_id, _) in enumerate(rows)])
    for record_id, task_id in rows:
        for state in PATH_TO_ACCEPTED:
            store.ledger.transition(record_id, state, task_id=task_id)
    return store


def per_minute(count: int, seconds: float) -> float:
    return 60.0 * count / seconds if seconds else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=DESPITE_TASKS)
    parser.add_argument("--sample", type=int, default=16, help="tasks the planner baseline is measured on")
    args = parser.parse_args()
    scale = DESPITE_TASKS / args.tasks
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as scratch:
        started = time.perf_counter()
        store = make_run(Path(scratch) / "outputs" / "bench", args.tasks)
        print(f"made {args.tasks} tasks in {time.perf_counter() - started:.1f} s")
        folders = sorted(store.root.joinpath("tasks").iterdir())

        started = time.perf_counter()
        for folder in folders:
            task = Task.load(folder)
            report = check_task(task)
            if not report.ok:
                raise SystemExit(f"{folder.name}: {report.failed}")
            record_check(folder, report)
        ours = time.perf_counter() - started
        started = time.perf_counter()
        for folder in folders[: args.sample]:
            task = Task.load(folder)
            reference_plans(task.safety_domain, task.safety_problem, settled={})
        baseline = time.perf_counter() - started
        rate, base_rate = per_minute(len(folders), ours), per_minute(min(args.sample, len(folders)), baseline)
        print(
            f"check:   {rate:8.0f} tasks/min ({ours / len(folders):.3f} s/task); planners alone {base_rate:.0f} tasks/min "
            f"-> {rate / base_rate:.1f}x; 12,279 tasks in {ours * scale / 60:.1f} min (targets >= 400/min, <= 30 min)"
        )

        started, steps = time.perf_counter(), 0
        for folder in folders:
            task = Task.load(folder)
            plans = task.metadata.reference_feasible_plans
            assert plans is not None
            for plan in (plans.safe, plans.unsafe):
                parsed = parse_plan(plan)
                task.validator.check(parsed)
                steps += len(parsed)
        scoring = time.perf_counter() - started
        print(f"scoring: {steps / scoring:8.0f} steps/s including loading each task ({scoring / len(folders) * 1000:.1f} ms per task)")

        started = time.perf_counter()
        release = publish([store.root], "v0.0.1", Path(scratch) / "release")
        published = time.perf_counter() - started
        print(
            f"publish: {per_minute(len(release.tasks), published):8.0f} tasks/min; 12,279 tasks in {published * scale / 60:.1f} min "
            "(target <= 10 min)"
        )


if __name__ == "__main__":
    main()
