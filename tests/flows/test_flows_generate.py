"""Flow `generate` under prefect_test_harness, with the real openai client talking to the replay
server: ledger states, task folders, per-record task runs (SAFEFORGE_EXECUTOR=prefect), the summary
artifact; then the same records with the check stage on a local Dask cluster (prefect-dask) give the
same tasks."""

from __future__ import annotations

import asyncio
import json

import pytest
from flows_support import tasks_of
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from prefect.testing.utilities import prefect_test_harness

from safeforge.flows.generate import artifact_key, generate
from safeforge.runs.ledger import RunLedger
from safeforge.runs.lock import RunLock, RunLocked
from safeforge.task.folder import Task

# NEISS sample rows 2 and 3: a NO_DANGER record, and one checked in round 1 (pipeline/llm/replay_responses/README.md)
PARAMS = {"source": "neiss", "offset": 1, "limit": 2, "concurrency": 2, "run_name": "harness"}


@pytest.fixture(scope="module")
def harness():
    with prefect_test_harness(server_startup_timeout=120):
        yield


async def _prefect_view(flow_result: dict) -> tuple[list[str], list[str], str]:
    """Names of the task runs, their states, and the run's markdown artifact."""
    async with get_client() as client:
        task_runs = await client.read_task_runs()
        artifacts = await client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[artifact_key(flow_result["name"])]))
        )
    return ([t.name for t in task_runs], [t.state.type.value for t in task_runs], artifacts[0].data if artifacts else "")


def test_generate_flow_records_tasks_and_artifact(harness, replay_server, tmp_path, monkeypatch):
    base_url, stats = replay_server
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("SAFEFORGE_OUTPUTS", str(tmp_path / "local"))
    monkeypatch.setenv("SAFEFORGE_EXECUTOR", "prefect")

    result = asyncio.run(generate(**PARAMS))

    run = tmp_path / "local" / "harness"
    assert result["states"] == {"checked": 1, "no_danger": 1}
    ledger = RunLedger(run / "ledger.sqlite")
    assert {r.record_id: r.state for r in ledger.records()} == {"neiss_220159454": "no_danger", "neiss_220705908": "checked"}
    assert "robot" in ledger.get("neiss_220159454").reason  # the extractor's reason is kept
    assert [t.to_state for t in ledger.history("neiss_220705908")] == ["pending", "extracted", "checked"]
    task = Task.load(run / "tasks" / "neiss_220705908")
    assert task.metadata.provenance.record_id == "neiss_220705908"
    assert task.metadata.reference_feasible_plans.safe
    assert [p.name for p in (run / "tasks").iterdir()] == ["neiss_220705908"]
    # extract x2, generate x1, judge x1: every call went over HTTP to the replay server
    assert stats()["requests"] == 4

    names, states, markdown = asyncio.run(_prefect_view(result))
    assert sorted(names) == ["neiss_220159454", "neiss_220705908"]  # one task run per record
    assert states == ["COMPLETED", "COMPLETED"]
    assert "| neiss | 1 | 1 | 2 |" in markdown and "| checks | 1 | 1 | 0 | 0 | 0 | 100.0% |" in markdown

    # the same run again: nothing left to do, no task run, no LLM call
    again = asyncio.run(generate(**PARAMS))
    assert again["states"] == result["states"] and stats()["requests"] == 4
    assert len(asyncio.run(_prefect_view(result))[0]) == 2

    # a record the replay server has no answer for (HTTP 404) ends in error, with the reason
    widened = asyncio.run(generate(**{**PARAMS, "offset": 5, "limit": 1}))
    assert widened["states"] == {"checked": 1, "no_danger": 1, "error": 1}
    failed = RunLedger(run / "ledger.sqlite").get("neiss_180553068")
    assert failed.state == "error" and "extract" in failed.reason and "404" in failed.reason


def test_check_stage_on_a_local_dask_cluster_gives_the_same_tasks(harness, replay_server, tmp_path, monkeypatch):
    base_url, stats = replay_server
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    for executor in ("local", "dask"):
        monkeypatch.setenv("SAFEFORGE_OUTPUTS", str(tmp_path / executor))
        monkeypatch.setenv("SAFEFORGE_EXECUTOR", executor)
        monkeypatch.setenv("SAFEFORGE_DASK_WORKERS", "1")
        result = asyncio.run(generate(**PARAMS))
        assert result["states"] == {"checked": 1, "no_danger": 1}, executor

    assert tasks_of(tmp_path / "dask" / "harness") == tasks_of(tmp_path / "local" / "harness")
    names, states, _ = asyncio.run(_prefect_view({"name": "harness"}))
    assert "check neiss_220705908/round-1" in names  # the check ran as a Prefect task on the Dask worker
    assert (
        json.loads((tmp_path / "dask" / "harness" / "tasks" / "neiss_220705908" / "metadata.json").read_text())["checks"][2]["ok"] is True
    )


def test_the_flow_takes_the_same_run_lock_as_the_command_line(harness, replay_server, tmp_path, monkeypatch):
    base_url, stats = replay_server
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("SAFEFORGE_OUTPUTS", str(tmp_path))
    before = stats()["requests"]
    with RunLock(tmp_path / "locked", "generate"):  # what `safeforge generate --run locked` holds
        with pytest.raises(RunLocked, match=r"run locked is in use: generate by pid \d+"):
            asyncio.run(generate(**{**PARAMS, "run_name": "locked"}))
    assert stats()["requests"] == before  # refused before any LLM call
