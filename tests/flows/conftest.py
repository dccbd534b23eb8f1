"""Fixtures of the Prefect application tests: a real Prefect server on a free port with its own
PREFECT_HOME, and the replay LLM server with the bundled responses."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from flows_support import base_env, free_port, kill_group
from tests_paths import REPO

from safeforge.llm.replay_server import running_replay_server

REPLAY = REPO / "pipeline" / "llm" / "replay_responses"
SERVER_START_TIMEOUT_S = 180


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory):
    """A real `prefect server start` (SQLite) on a free loopback port; yields (api_url, env)."""
    home = tmp_path_factory.mktemp("prefect-home")
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = base_env(home, api)
    log = open(home / "server.log", "wb")
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("prefect")), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while True:
        try:
            if httpx.get(f"{api}/health", timeout=2).text.strip() == "true":
                break
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            kill_group(process)
            pytest.fail(f"the Prefect server did not start:\n{(home / 'server.log').read_text()[-3000:]}")
        time.sleep(0.5)
    yield api, env
    kill_group(process)
    log.close()


@pytest.fixture
def replay_server():
    """The replay LLM server with the bundled responses; yields (base_url, stats())."""
    if not REPLAY.is_dir():
        pytest.fail(f"{REPLAY} is missing (the bundled replay responses of the offline demo)")
    with running_replay_server(REPLAY, latency_ms=0) as base_url:
        yield base_url, lambda: httpx.get(base_url.removesuffix("/v1") + "/admin/stats").json()
