"""Helpers of the Prefect application tests: processes, flows in subprocesses, task comparison."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from tests_paths import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(prefect_home: Path, api_url: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of a Safeforge process in a test: this machine's, with Prefect's state in
    `prefect_home`, analytics off, and nothing of the developer's Prefect or LLM settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "SAFEFORGE_", "OPENAI_", "DASK_"))}
    env.update(
        PREFECT_HOME=str(prefect_home),
        DO_NOT_TRACK="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_RUNNER_POLL_FREQUENCY="1",
        PREFECT_LOGGING_LEVEL="INFO",
    )
    if api_url:
        env["PREFECT_API_URL"] = api_url
    env.update(extra)
    return env


def kill_group(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """End a process started with start_new_session=True and everything in its group."""
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)


RUN_FLOW = """
import asyncio, json, sys
from safeforge.flows.generate import generate
result = asyncio.run(generate(**json.loads(sys.argv[1])))
print("RESULT " + json.dumps(result["states"]))
"""


def start_flow(params: dict, env: dict, log: Path) -> subprocess.Popen:
    """Run flow `generate` with `params` in a new process (its own session), logging to `log`."""
    out = open(log, "ab")
    return subprocess.Popen(
        [sys.executable, "-c", RUN_FLOW, json.dumps(params)],
        cwd=REPO,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def run_flow(params: dict, env: dict, log: Path, timeout: float = 300) -> None:
    process = start_flow(params, env, log)
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process, signal.SIGKILL)
        pytest.fail(f"flow did not finish in {timeout}s:\n{log.read_text()[-3000:]}")
    assert code == 0, f"flow failed ({code}):\n{log.read_text()[-4000:]}"


VOLATILE_KEYS = {"tokens", "cost_usd", "cache_hit"}
"""Per-call figures that differ between equivalent runs: cache hits on resume, and the replay
server's emulated prefix caching, which depends on the order of requests across records."""
_SECONDS = re.compile(r"\d+\.\d+s\b")


def _stable(value):
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, str):
        return _SECONDS.sub("<t>s", value)  # planner times in check details
    return value


def task_fingerprint(folder: Path) -> dict:
    """A task folder's files with metadata.json reduced to what equivalent runs must share."""
    files = {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.is_file()}
    files["metadata.json"] = _stable(json.loads(files["metadata.json"]))
    return files


def tasks_of(run: Path) -> dict[str, dict]:
    return {p.name: task_fingerprint(p) for p in sorted((run / "tasks").iterdir())}
