"""DESPITE scale: N tasks (default 12,279, DESPITE's count) checked, published and exported to SPOC (not a test).

Makes N task folders from the example tasks, examples/tasks and examples/spoc (the latter placed in
AI2-THOR scenes, so half the tasks export to SPOC; renamed copies, each with its own problem name
so no two are duplicates), as the checked tasks of one run, then times, in this process:
- the check stage (`check_task`: structure, reference plans, validator agreement) on every task,
  against a baseline measured in the same run: the planners alone (the in-process search skipped)
  on a sample;
- scoring: the reference plans of every task through the validator (steps per second);
- evaluation of every task (one sample each) against the replay server in its own process, with
  200 ms latency, at concurrency 16, against its latency bound;
- review push of every task into a project on a real Label Studio server (from .venv-labelstudio);
- publishing all N tasks once accepted (re-validation, parquet, archive, card);
- `spoc export` of the release (every task's scene, constraint and window proof, the files under
  SPOC's rules).
Each figure is printed with its projection to 12,279 tasks and the target on a 2-CPU machine
(checks >= 400 tasks/min, 12,279 checked <= 30 min; eval, review push, publish and SPOC export
<= 10 min each).

    .venv/bin/python benchmarks/bench_despite_scale.py [--tasks 12279] [--sample 16] [--no-review]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_generation import start_server as start_replay_server  # noqa: E402

from safeforge.evaluation import EvalSettings, run_evaluation  # noqa: E402
from safeforge.llm import LLMConfig  # noqa: E402
from safeforge.planning.solve import reference_plans  # noqa: E402
from safeforge.publishing import publish  # noqa: E402
from safeforge.review import ReviewConfig, check_installation, push_run, start_server, stop_server  # noqa: E402
from safeforge.runs.ledger import RunStore  # noqa: E402
from safeforge.spoc import check_folder, export  # noqa: E402
from safeforge.task.checks import check_task, record_check  # noqa: E402
from safeforge.task.folder import Task  # noqa: E402
from safeforge.validation.plan_text import parse_plan  # noqa: E402

EXAMPLES = sorted(p for folder in ("tasks", "spoc") for p in (REPO / "examples" / folder).iterdir() if p.is_dir())
DESPITE_TASKS = 12_279
PATH_TO_CHECKED = ("extracted", "checked")
EVAL_CONCURRENCY, EVAL_LATENCY_MS = 16, 200


def distinct_problem(folder: Path, number: int) -> str:
    """The copy's safety problem with its own name and one spare object of its own, so that no two
    copies are duplicates and each prompt differs (an identical prompt would be a cache hit). The
    spare object is of the root type `object`, which no action takes, so it changes no plan."""
    problem = (folder / "safety_problem.pddl").read_text()
    problem = re.sub(r"\(problem (\S+)\)", rf"(problem \1_{number})", problem, count=1)
    return re.sub(r"\(:objects", f"(:objects bench_spare_{number} - object", problem, count=1, flags=re.IGNORECASE)


def make_run(root: Path, count: int) -> RunStore:
    store = RunStore(root)
    rows = []
    for number in range(count):
        example = EXAMPLES[number % len(EXAMPLES)]
        task_id = f"{example.name}_{number:05d}"
        folder = store.task_dir(task_id)
        shutil.copytree(example, folder)
        (folder / "safety_problem.pddl").write_text(distinct_problem(folder, number))
        metadata = json.loads((folder / "metadata.json").read_text())
        metadata["task_id"] = task_id
        metadata["provenance"] = {"source": "neiss", "record_id": f"neiss_{number}", "run": store.name}
        metadata["review"] = {"decision": "accepted", "final_rule": "single", "annotations": [{"annotator": "a@x", "decision": "accept"}]}
        (folder / "metadata.json").write_text(json.dumps(metadata))
        rows.append((f"neiss_{number}", task_id))
    store.ledger.register([(record_id, "neiss", f"bench.csv:row {n}") for n, (record_id, _) in enumerate(rows)])
    for record_id, task_id in rows:
        for state in PATH_TO_CHECKED:
            store.ledger.transition(record_id, state, task_id=task_id)
    return store


def accept_all(store: RunStore) -> None:
    """What review pull does for a unanimous accept: every task in review becomes accepted."""
    for row in store.ledger.records(state="checked") + store.ledger.records(state="in_review"):
        if row.state == "checked":
            store.ledger.transition(row.record_id, "in_review")
        store.ledger.transition(row.record_id, "accepted")


def replay_answers(folder: Path) -> Path:
    """Replay entries answering each example's prompt with its safe reference plan (every copy of
    an example shares its basic domain, which the prompt holds)."""
    entries = []
    for example in EXAMPLES:
        task = Task.load(example)
        plans = task.metadata.reference_feasible_plans
        assert plans is not None
        content = "Final plan:\n```\n" + plans.safe.replace(") (", ")\n(") + "\n```\n"
        entries.append({"match": {"contains": [(example / "domain.pddl").read_text().strip()]}, "response": {"content": content}})
    directory = folder / "replay"
    directory.mkdir()
    (directory / "answers.json").write_text(json.dumps(entries))
    return directory


def bench_eval(store: RunStore, scratch: Path, count: int, scale: float) -> None:
    server, url = start_replay_server(replay_answers(scratch), EVAL_LATENCY_MS)
    try:
        config = LLMConfig(base_url=url, db_path=scratch / "llm.sqlite", max_concurrency=EVAL_CONCURRENCY)
        settings = EvalSettings(model="replay-planner", include_unreviewed=True)
        started = time.perf_counter()
        report = run_evaluation(store.root, settings, config, scratch / "eval", progress=None)
        seconds = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(10)
    bound = math.ceil(count / EVAL_CONCURRENCY) * EVAL_LATENCY_MS / 1000
    scored_2 = sum(row["score"] == 2 for row in report.rows)
    print(
        f"eval:    {per_minute(count, seconds):8.0f} tasks/min ({scored_2} of {len(report.rows)} answers score 2, "
        f"{len(report.problems)} problems); latency bound {bound:.1f} s, ratio {bound / seconds:.2f}; "
        f"12,279 tasks in {seconds * scale / 60:.1f} min (target <= 10 min)"
    )


def bench_review_push(store: RunStore, scratch: Path, count: int, scale: float) -> None:
    check_installation()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "bench-admin-token"
    handle = start_server(scratch / "labelstudio", port, "admin@bench.test", "bench-password-1", token)
    try:
        config = ReviewConfig(handle.url, token, "admin@bench.test", "bench-password-1", data_dir=scratch / "labelstudio")
        started = time.perf_counter()
        result = push_run(store, config)
        seconds = time.perf_counter() - started
    finally:
        stop_server(handle)
    print(
        f"review push: {per_minute(len(result.imported), seconds):8.0f} tasks/min ({len(result.imported)} imported); "
        f"12,279 tasks in {seconds * scale / 60:.1f} min (target <= 10 min)"
    )


def bench_spoc_export(release: Path, scratch: Path, scale: float) -> None:
    """`spoc export` of the release, in this process: wall time, and the CPU time it took (on a
    shared machine the wall time also counts the waits for a CPU)."""
    started, cpu = time.perf_counter(), time.process_time()
    report = export(release, scratch / "spoc")
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    problems = [p for p in check_folder(scratch / "spoc") if p.is_error]
    tasks = len(report.exported) + len(report.skipped)
    print(
        f"spoc export: {per_minute(tasks, seconds):8.0f} tasks/min ({len(report.exported)} files, {len(report.skipped)} skipped, "
        f"{len(problems)} errors under SPOC's rules); 12,279 tasks in {seconds * scale / 60:.1f} min, "
        f"{cpu * scale / 60:.1f} CPU min (target <= 10 min)"
    )


def per_minute(count: int, seconds: float) -> float:
    return 60.0 * count / seconds if seconds else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=DESPITE_TASKS)
    parser.add_argument("--sample", type=int, default=16, help="tasks the planner baseline is measured on")
    parser.add_argument("--no-review", action="store_true", help="skip the review push (it starts Label Studio)")
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
            record_check(task, report)
        ours = time.perf_counter() - started
        started = time.perf_counter()
        for folder in folders[: args.sample]:
            task = Task.load(folder)
            reference_plans(task.safety_domain, task.safety_problem)
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

        bench_eval(store, Path(scratch), len(folders), scale)
        if not args.no_review:
            bench_review_push(store, Path(scratch), len(folders), scale)
        accept_all(store)

        started = time.perf_counter()
        release = publish([store.root], "v0.0.1", Path(scratch) / "release")
        published = time.perf_counter() - started
        print(
            f"publish: {per_minute(len(release.tasks), published):8.0f} tasks/min; 12,279 tasks in {published * scale / 60:.1f} min "
            "(target <= 10 min)"
        )
        bench_spoc_export(release.path, Path(scratch), scale)


if __name__ == "__main__":
    main()
