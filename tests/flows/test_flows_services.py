"""End to end, as a user drives it (the steps of scripts/demo.sh, then on): `safeforge services
start` (Prefect server, replay LLM server, the process serving the deployments, Label Studio),
`prefect deployment run generate/neiss --watch` on the bundled sample and on its two household
records (their tasks generated for an AI2-THOR kitchen: the run ends with their SPOC files),
review-push, an annotation in Label Studio, review-pull and publish deployments, then `safeforge
services stop` leaves no process behind."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
from flows_support import base_env, free_port
from tests_paths import REPO

from safeforge.review._mapping import ReviewMapping
from safeforge.runs.ledger import RunLedger, RunStore
from safeforge.settings import Settings
from safeforge.task.folder import Task

SAFEFORGE = [sys.executable, "-m", "safeforge.cli"]
PREFECT = str(Path(sys.executable).with_name("prefect"))
NEISS_DEMO = {
    "neiss_170957638": "checked",
    "neiss_220159454": "no_danger",
    "neiss_220705908": "checked",
    "neiss_151238381": "checked",
    "neiss_160538697": "rejected_by_checks",
    "neiss_150306562": "checked",  # the demo's household records
    "neiss_231234262": "checked",
}
HOUSEHOLD = REPO / "sources" / "samples" / "neiss" / "neiss_2014_2023_code_replaced_100_samples.csv"


ACCEPTED = ["neiss_170957638", "neiss_220705908"]


def _accept(label_studio: str, ls_task_id: int) -> None:
    """Submit an "accept" annotation as the reviewing admin (the shape the interface submits)."""
    result = [{"from_name": "decision", "to_name": "plans", "type": "choices", "value": {"choices": ["accept"]}}]
    response = httpx.post(
        f"{label_studio}/api/tasks/{ls_task_id}/annotations/",
        json={"result": result},
        headers={"Authorization": f"Token {Settings().label_studio_api_key.get_secret_value()}"},
        timeout=30,
    )
    assert response.status_code == 201, response.text


def _run(command: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _exports(text: str) -> dict[str, str]:
    pairs = (shlex.split(line.removeprefix("export "))[0].split("=", 1) for line in text.splitlines() if line)
    return dict(pairs)


def _ours(marker: str) -> list[str]:
    """Processes whose environment points at this test's state folder."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if process.environ().get("SAFEFORGE_STATE_DIR") == marker:
                found.append(f"{process.pid}: {' '.join(process.info['cmdline'] or [])[:120]}")
        except psutil.Error:
            continue
    return found


def _newest_artifact(api: str, key: str) -> str:
    """The data of the newest version of the Prefect artifact `key`."""
    query = {"artifacts": {"key": {"any_": [key]}}, "sort": "CREATED_DESC", "limit": 1}
    return httpx.post(f"{api}/artifacts/filter", json=query).json()[0]["data"]


def test_services_main_command_and_clean_stop(tmp_path):
    state, outputs = tmp_path / "state", tmp_path / "outputs"
    ls_port = free_port()
    env = base_env(
        tmp_path / "prefect-home",
        SAFEFORGE_STATE_DIR=str(state),
        SAFEFORGE_OUTPUTS=str(outputs),
        SAFEFORGE_PREFECT_PORT=str(free_port()),
        SAFEFORGE_REPLAY_PORT=str(free_port()),
        LABEL_STUDIO_URL=f"http://127.0.0.1:{ls_port}",
        SAFEFORGE_LABELSTUDIO_DATA=str(tmp_path / "labelstudio"),
    )
    statuses: dict = {}
    try:
        started = _run([*SAFEFORGE, "services", "start"], env, timeout=600)
        assert "deployments: ready" in started.stdout and "label-studio: ready" in started.stdout
        statuses = {s["name"]: s for s in map(json.loads, _run([*SAFEFORGE, "services", "status", "--json"], env, 60).stdout.splitlines())}
        assert all(s["running"] for s in statuses.values()) and len(statuses) == 4
        again = _run([*SAFEFORGE, "services", "start"], env, timeout=120)  # idempotent: reuses everything
        assert again.stdout.count("already running") == 4

        shell = {**env, **_exports(_run([*SAFEFORGE, "services", "env"], env, 60).stdout)}
        api = shell["PREFECT_API_URL"]
        assert shell["OPENAI_BASE_URL"] == statuses["llm-replay"]["url"]
        watched = _run([PREFECT, "deployment", "run", "generate/neiss", "--watch"], shell, timeout=600)
        assert "Completed" in watched.stdout
        (run,) = [p for p in outputs.iterdir() if (p / "ledger.sqlite").exists()]
        household = [f"path={HOUSEHOLD}", 'filters={"products": [464, 4056]}', f"run_name={run.name}"]
        watched = _run(
            [PREFECT, "deployment", "run", "generate/neiss", "--watch", *(a for p in household for a in ("--param", p))], shell, 600
        )
        assert "Completed" in watched.stdout

        ledger = RunLedger(run / "ledger.sqlite")
        assert {r.record_id: r.state for r in ledger.records()} == NEISS_DEMO
        assert sorted(p.name for p in (run / "tasks").iterdir()) == sorted(r for r, state in NEISS_DEMO.items() if state == "checked")
        assert Task.load(run / "tasks" / "neiss_151238381").metadata.provenance.attempts == 2
        summary = _newest_artifact(api, f"run-{run.name}")  # the second run's summary, of both runs' records
        assert "| neiss | 5 | 1 | 1 | 7 |" in summary
        assert f"SPOC goal-condition files: 2 of the 5 checked task(s) export -> {run / 'spoc'}." in summary
        assert sorted(p.name for p in (run / "spoc").iterdir()) == [
            "Injury_CloseSteps_Cabinet_None_00000.json",
            "Injury_CloseSteps_Drawer_None_00000.json",
        ]

        pushed = _run(
            [PREFECT, "deployment", "run", "review-push/checked", "--watch", "--param", f"run_name={run.name}"], shell, timeout=300
        )
        assert "Completed" in pushed.stdout
        assert {r.record_id for r in ledger.records(state="in_review")} == {r for r, state in NEISS_DEMO.items() if state == "checked"}
        ledger.close()
        link = httpx.post(f"{api}/artifacts/filter", json={"artifacts": {"key": {"any_": [f"review-run-{run.name}"]}}}).json()
        assert f"http://127.0.0.1:{ls_port}/projects/" in link[0]["data"]
        where = _run([*SAFEFORGE, "services", "where", run.name], shell, timeout=60).stdout  # the demo's last words
        assert f"tasks:          {run / 'tasks'}" in where and f"review project: http://127.0.0.1:{ls_port}/projects/" in where, where
        assert f"workbench:      safeforge workbench {run}  " in where, where
        assert f"SPOC files:     {run / 'spoc'}  (2 goal-condition file(s): " in where, where

        # a reviewer accepts two tasks in Label Studio; review-pull records it, publish releases them
        mapping = ReviewMapping.load(RunStore(run))
        for task_id in ACCEPTED:
            _accept(f"http://127.0.0.1:{ls_port}", mapping.tasks[task_id].ls_task_id)
        _run([PREFECT, "deployment", "run", "review-pull/decisions", "--watch", "--param", f"run_name={run.name}"], shell, timeout=300)
        ledger = RunLedger(run / "ledger.sqlite")
        assert {r.record_id: r.state for r in ledger.records() if r.state in ("accepted", "in_review")} == {
            "neiss_170957638": "accepted",
            "neiss_220705908": "accepted",
            "neiss_151238381": "in_review",
            "neiss_150306562": "in_review",
            "neiss_231234262": "in_review",
        }
        ledger.close()
        summaries = httpx.post(f"{api}/artifacts/filter", json={"artifacts": {"key": {"any_": [f"run-{run.name}"]}}}).json()
        assert any("### Agreement" in a["data"] and "2 accepted, 0 rejected" in a["data"] for a in summaries)  # the run's artifact
        _run(
            [PREFECT, "deployment", "run", "publish/release", "--watch", "--param", "version=v0.1.0", "--param", f'runs=["{run.name}"]'],
            shell,
            timeout=300,
        )
        release = json.loads((outputs / "releases" / "v0.1.0" / "release.json").read_text())
        assert sorted(t["task_id"] for t in release["tasks"]) == sorted(ACCEPTED), release
    finally:
        stopped = subprocess.run([*SAFEFORGE, "services", "stop"], cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert stopped.returncode == 0, stopped.stderr
    assert _ours(str(state)) == []
    served = Path(statuses["deployments"]["log"]).read_text(errors="replace")
    assert "never awaited" not in served and "Traceback" not in served, served[-2000:]  # stopped cleanly
    for status in statuses.values():
        assert (
            status["pid"] is None or not psutil.pid_exists(status["pid"]) or psutil.Process(status["pid"]).status() == psutil.STATUS_ZOMBIE
        ), status
