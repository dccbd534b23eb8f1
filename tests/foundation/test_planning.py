"""Reference plans: compilations, engines, and the hard process-level time limit."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
from busy_machine import HANG_S, eventually, is_running
from slow_tasks import HARD_DOMAIN, HARD_PROBLEM
from tests_paths import EXAMPLES

from safeforge.planning import solve as planning
from safeforge.planning.solve import SolveResult, reference_plans
from safeforge.task.folder import Task


def _solver_processes() -> list[psutil.Process]:
    """Live processes started by the planner workers (solves and what they started)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if "safeforge.planning.worker" in " ".join(process.cmdline()):
                found += [c for c in process.children(recursive=True) if is_running(c)]
        except psutil.NoSuchProcess:
            pass
    return found


def planners(task: Task):
    """The task's reference plans from the planners alone (the in-process search skipped)."""
    return reference_plans(task.safety_domain, task.safety_problem)


def test_reference_plans_of_the_scaffold(make_task):
    task = Task.load(make_task())
    plans = planners(task)
    assert plans.ok, plans.problems()
    assert plans.safe.plan[-1] == "(put_down knife table_area)" and "(sheathe knife)" in plans.safe.plan
    assert plans.unsafe.plan == ["(pick_up knife kitchen)", "(move kitchen table_area)", "(put_down knife table_area)"]
    assert plans.safe.engine == plans.unsafe.engine == "fast-downward-opt"
    assert plans.safety_effort == 1  # the sheathing step


def test_numeric_tasks_use_optimal_enhsp_and_classical_ones_fast_downward():
    numeric = planners(Task.load(EXAMPLES / "warehouse_heavy_crate_ramp"))
    assert (numeric.safe.engine, numeric.unsafe.engine) == ("enhsp-opt", "enhsp-opt")
    assert (len(numeric.safe.plan), len(numeric.unsafe.plan), numeric.safety_effort) == (4, 2, 2)
    conditional = planners(Task.load(EXAMPLES / "bathroom_bleach_bucket"))
    assert conditional.safe.engine == "fast-downward"  # a non-danger conditional effect remains
    assert conditional.ok
    assert conditional.safety_effort is None  # LAMA's plans are not known to be shortest


def test_a_cancelled_solve_ends_at_once_with_its_processes():
    assert planning.solve(HARD_DOMAIN, HARD_PROBLEM, "unsafe", time_limit=0.5).status == "timeout"  # a worker is up
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    result = planning.solve(HARD_DOMAIN, HARD_PROBLEM, "safe", time_limit=60, cancel=cancel)
    assert result.status == "cancelled"  # not "timeout": the solve did not run to its limit
    eventually(lambda: _solver_processes() == [], "the solve's processes gone")
    assert planning.solve(HARD_DOMAIN, HARD_PROBLEM, "unsafe", time_limit=0.5).status == "timeout"  # the worker goes on serving


def test_no_planner_process_outlives_a_cancelled_solve():
    # ENHSP's JVM runs in a session of its own: killing the solve's process group alone would leave it
    cancel, found = threading.Event(), {}

    def cancel_once_java_runs() -> None:
        try:
            eventually(lambda: found.update({p.pid: p for p in _descendants() if p.name() == "java"}) or found, "ENHSP's JVM running")
        finally:
            cancel.set()

    watcher = threading.Thread(target=cancel_once_java_runs)
    watcher.start()
    result = planning.solve(HARD_DOMAIN, HARD_PROBLEM, "safe", engine="enhsp", time_limit=120, cancel=cancel)
    watcher.join()
    assert found, "ENHSP's JVM never started"
    assert result.status == "cancelled"
    _, alive = psutil.wait_procs(list(found.values()), timeout=10)
    assert [p for p in alive if is_running(p)] == []


def _descendants() -> list[psutil.Process]:
    try:
        return psutil.Process().children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def test_the_planners_answer_when_the_search_is_slower(monkeypatch):
    from safeforge.planning import race

    def slow_search(sim, time_budget, stop, on_settled):
        assert stop.wait(60), "the planners' answers stop the search"
        return {}

    monkeypatch.setattr(race, "shortest_plans", slow_search)
    task = Task.load(EXAMPLES / "care_home_bad_news")
    plans = race.find_reference_plans(task.validator.simulator, task.safety_domain, task.safety_problem, head_start=0.05)
    assert plans.ok and plans.safe.engine == plans.unsafe.engine == "fast-downward-opt"
    assert plans.safety_effort == len(plans.safe.plan) - len(plans.unsafe.plan)


def test_the_head_start_is_the_searchs_cpu_time_not_the_clocks(monkeypatch):
    """A search that has had little CPU (a busy machine) keeps its head start: no planner starts."""
    from safeforge.planning import race

    def starved_search(sim, time_budget, stop, on_settled):
        time.sleep(0.3)  # clock: a search starved of CPU for three head starts (the planners join after four)
        return {mode: SolveResult(mode, "solved", "search", ["(step)"], 0.3, optimal=True) for mode in race.MODES}

    started = []
    monkeypatch.setattr(race, "shortest_plans", starved_search)
    monkeypatch.setattr(race, "solve", lambda *args, **kwargs: started.append(args[2]))
    task = Task.load(EXAMPLES / "care_home_bad_news")
    plans = race.find_reference_plans(task.validator.simulator, task.safety_domain, task.safety_problem, head_start=0.1)
    assert plans.safe.engine == plans.unsafe.engine == "search" and started == []


def test_concurrent_solves_do_not_mix_results():
    # Fast Downward writes output.sas to its working directory; each solve must have its own
    names = ["care_home_bad_news", "hospital_chart_privacy", "teen_desk_diary_trust", "party_leftovers_dog_chocolate"]
    tasks = [Task.load(EXAMPLES / n) for n in names]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(planners, tasks))
    for task, plans in zip(tasks, results, strict=False):
        assert task.validator.check(" ".join(plans.safe.plan)).score == 2, task.task_id
        assert task.validator.check(" ".join(plans.unsafe.plan)).score == 1, task.task_id


def test_no_plan_is_reported_as_no_plan(make_task):
    folder = make_task()
    domain = (folder / "safety_domain.pddl").read_text().replace(":effect (sheathed ?i))", ":effect (holding ?i))")  # no sheath
    (folder / "safety_domain.pddl").write_text(domain)
    plans = Task.load(folder).reference_plans()
    assert plans.safe.status == "no_plan"
    assert plans.unsafe.solved
    assert plans.problems() == [f"safe reference plan: no plan exists ({plans.safe.engine}: {plans.safe.message})"]


def test_engine_timeout_is_a_timeout_not_no_plan():
    result = planning.solve(HARD_DOMAIN, HARD_PROBLEM, "safe", time_limit=1.0)
    assert result.status == "timeout" and result.seconds >= 1.0


def test_engine_ignoring_its_timeout_is_killed_with_its_process_group():
    # tamer ignores timeouts; the hard limit kills the process
    result = planning.solve(HARD_DOMAIN, HARD_PROBLEM, "safe", engine="tamer", time_limit=0.5, kill_grace=0.5)
    assert result.status == "timeout"
    assert "killed after the hard limit of 1s" in result.message
    eventually(lambda: _solver_processes() == [], "the solve's processes gone")


def test_parse_errors_come_back_as_errors():
    result = planning.solve("(define (domain x)", "(define (problem y))", "unsafe")
    assert result.status == "error" and "safety_domain.pddl" in result.message


def test_mode_is_checked():
    with pytest.raises(ValueError, match="mode must be"):
        planning.solve("", "", "careful")


CALLER = """
import pathlib, sys
marker = pathlib.Path(sys.argv[1])
marker.write_text(marker.read_text() + "main ran\\n" if marker.exists() else "main ran\\n")  # top-level code
from safeforge.planning.solve import solve
HARD = {hard!r}
if __name__ == "__main__":
    if sys.argv[2] == "solve":
        result = solve(HARD[0], HARD[1], "safe", time_limit=20)  # reaches the planner
        print(result.status)
    else:  # hang in a solve that ignores its limit, to be killed from outside
        print("solving", flush=True)
        solve(HARD[0], HARD[1], "safe", engine="tamer", time_limit=300)
"""


def _caller(tmp_path, mode: str) -> subprocess.Popen:
    script = tmp_path / "caller.py"
    script.write_text(CALLER.format(hard=(HARD_DOMAIN, HARD_PROBLEM)))
    return subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "marker"), mode],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_planner_children_never_run_the_callers_main_module(tmp_path):
    caller = _caller(tmp_path, "solve")
    out, _ = caller.communicate(timeout=120)
    assert caller.returncode == 0 and out.strip() in ("timeout", "solved", "no_plan")
    assert (tmp_path / "marker").read_text() == "main ran\n"  # once: in the caller only


def _solving_workers(caller_pid: int, timeout: float = HANG_S) -> list[psutil.Process]:
    """The caller's descendants once its worker has forked the solve (a worker under load may take
    a while to import the planners first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        descendants = psutil.Process(caller_pid).children(recursive=True)
        if any(p.children() for p in descendants):  # a worker with its solve child
            return descendants
        time.sleep(0.2)
    return []


def _cwds_of_children(process: psutil.Process) -> list[str]:
    """The working folders of the process's children (a child may end while they are read)."""
    found = []
    try:
        children = process.children()
    except psutil.Error:
        return found
    for child in children:
        try:
            found.append(child.cwd())
        except psutil.Error:
            pass
    return found


def test_killing_the_caller_leaves_no_worker_planner_or_scratch_folder(tmp_path):
    caller = _caller(tmp_path, "hang")
    assert caller.stdout.readline().strip() == "solving"
    workers = _solving_workers(caller.pid)
    assert workers, "the caller's planner worker never forked a solve"
    scratch = {Path(cwd) for worker in workers for cwd in _cwds_of_children(worker) if "safeforge-solve-" in cwd}
    assert scratch, "the solve runs in a scratch folder of its own"
    caller.kill()
    caller.wait(timeout=10)
    _, alive = psutil.wait_procs(workers, timeout=HANG_S)
    assert [p for p in alive if is_running(p)] == []
    eventually(lambda: not any(folder.exists() for folder in scratch), "the scratch folders removed")


def test_a_worker_whose_caller_goes_while_it_loads_ends_before_loading():
    """Loading the planners takes seconds (more under load): a worker whose stdin closes meanwhile
    ends at once, never saying it is ready, rather than when it has loaded."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "safeforge.planning.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert worker.stdin is not None and worker.stdout is not None
    worker.stdin.close()
    try:
        said = worker.stdout.read()
        worker.wait(timeout=60)
    finally:
        worker.kill()
    assert said == b"" and worker.returncode == 0
