"""Fixtures for the evaluation tests: the example tasks, replay files written by the tests, a
real replay server over HTTP, and a fast LLM configuration."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from evaluation_helpers import MODEL
from tests_paths import EXAMPLES

from safeforge.llm import LLMConfig
from safeforge.llm.replay_server import running_replay_server
from safeforge.task.folder import Task


@pytest.fixture(scope="session")
def example_tasks() -> dict[str, Task]:
    """The eight example tasks, loaded once (parsing takes a while)."""
    return {folder.name: Task.load(folder) for folder in sorted(EXAMPLES.iterdir())}


@pytest.fixture
def start_replay(tmp_path: Path) -> Iterator[Callable[[list[dict]], str]]:
    """start_replay(entries) -> base URL of a running replay server serving them."""
    with ExitStack() as stack:
        counter = iter(range(1_000))

        def start(entries: list[dict[str, Any]]) -> str:
            directory = tmp_path / f"replay{next(counter)}"
            directory.mkdir()
            (directory / "responses.json").write_text(json.dumps(entries), encoding="utf-8")
            return stack.enter_context(running_replay_server(directory))

        yield start


@pytest.fixture
def llm_config(tmp_path: Path) -> Callable[..., LLMConfig]:
    """llm_config(base_url, **overrides): two attempts, tiny backoff, a cache in tmp_path."""

    def make(base_url: str, **overrides: Any) -> LLMConfig:
        values: dict[str, Any] = {
            "base_url": base_url,
            "model": MODEL,
            "db_path": tmp_path / "llm.sqlite",
            "max_attempts": 2,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.02,
            "timeout_s": 10.0,
        }
        return LLMConfig(**{**values, **overrides})

    return make


@pytest.fixture
def task_subset(tmp_path: Path) -> Callable[..., Path]:
    """task_subset(*names): a folder holding copies of those example tasks."""
    counter = iter(range(1_000))

    def make(*names: str) -> Path:
        folder = tmp_path / f"tasks{next(counter)}"
        folder.mkdir()
        for name in names:
            shutil.copytree(EXAMPLES / name, folder / name)
        return folder

    return make
