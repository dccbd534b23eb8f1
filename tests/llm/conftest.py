"""Fixtures for the LLM layer: a real replay server over HTTP and fast client configs."""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from safeforge.llm import LLMConfig
from safeforge.llm.replay_server import running_replay_server

SENTINEL_KEY = "sk-SENTINEL-4b1d9e77c0ffee"


class Danger(BaseModel):
    """The response schema used throughout these tests."""

    hazard: str
    severity: int


class FakeClock:
    """A clock for the limiter and the retries that moves only when they sleep: `sleep(s)` records
    `s` in `waits`, lets the other tasks run once, then sets the clock to at least when it began
    plus `s` (sleeps begun at the same instant end together, as on a real clock). `on_advance`
    sees every step the clock takes (e.g. to move the replay server's clock along)."""

    def __init__(self, on_advance: Callable[[float], None] | None = None):
        self.now = 0.0
        self.waits: list[float] = []
        self.on_advance = on_advance

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        until = self.now + seconds
        await asyncio.sleep(0)
        if until > self.now:
            step, self.now = until - self.now, until
            if self.on_advance is not None:
                self.on_advance(step)


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def start_replay(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """start_replay(entries, **ReplayOptions fields) -> base URL of a running replay server."""
    with ExitStack() as stack:
        counter = iter(range(1_000))

        def start(entries: list[dict[str, Any]], **options: Any) -> str:
            directory = tmp_path / f"replay{next(counter)}"
            directory.mkdir()
            (directory / "responses.json").write_text(json.dumps(entries), encoding="utf-8")
            return stack.enter_context(running_replay_server(directory, **options))

        yield start


def _admin(base_url: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    root = base_url.removesuffix("/v1")
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(root + path, data=data, method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


@pytest.fixture
def server_stats() -> Callable[[str], dict[str, Any]]:
    return lambda base_url: _admin(base_url, "/admin/stats")


@pytest.fixture
def set_clock() -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    """set_clock(base_url, {"frozen": true} / {"advance": seconds}): the replay server's clock."""
    return lambda base_url, body: _admin(base_url, "/admin/clock", body)


@pytest.fixture
def set_faults() -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    return lambda base_url, body: _admin(base_url, "/admin/faults", body)


@pytest.fixture
def make_config(tmp_path: Path) -> Callable[..., LLMConfig]:
    """make_config(base_url, **overrides): tiny backoff, short timeout, a sentinel key."""

    def make(base_url: str, **overrides: Any) -> LLMConfig:
        values: dict[str, Any] = {
            "base_url": base_url,
            "api_key": SENTINEL_KEY,
            "model": "deepseek-chat",
            "db_path": tmp_path / "llm.sqlite",
            "max_attempts": 3,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
            "timeout_s": 5.0,
        }
        return LLMConfig(**{**values, **overrides})

    return make


@pytest.fixture
def closed_port_url() -> str:
    """A base URL nothing listens on (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def schema() -> type[Danger]:
    return Danger


@pytest.fixture
def sentinel_key() -> str:
    return SENTINEL_KEY


@pytest.fixture
def messages() -> Callable[[str], list[dict[str, str]]]:
    """messages(text): a system prompt and one user turn."""
    return lambda text: [
        {"role": "system", "content": "You extract dangers."},
        {"role": "user", "content": text},
    ]
