"""Fixtures of the generation tests: copies of the hand-written replay files with faults or extra
entries, and replay servers over real HTTP."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from generation_helpers import REPLAY

from safeforge.llm.replay_server import running_replay_server


@pytest.fixture
def replay_dir(tmp_path: Path) -> Callable[..., Path]:
    """replay_dir(extra={file_name: entries}, faults={(record_id, stage): [...]}) -> a copy of the
    hand-written replay files with test entries added and faults set on the named entries."""

    def make(extra: dict[str, list[dict]] | None = None, faults: dict[tuple[str, str], list[str]] | None = None) -> Path:
        folder = tmp_path / f"replay-{len(list(tmp_path.glob('replay-*')))}"
        shutil.copytree(REPLAY, folder, ignore=shutil.ignore_patterns("*.md"))
        for (record_id, stage), kinds in (faults or {}).items():
            path = folder / f"{record_id}.json"
            entries = json.loads(path.read_text(encoding="utf-8"))
            matching = [e for e in entries if f"stage: {stage}" in e["match"]["contains"]]
            assert len(matching) == 1, f"{record_id}: expected one {stage} entry"
            matching[0]["faults"] = kinds
            path.write_text(json.dumps(entries), encoding="utf-8")
        for name, entries in (extra or {}).items():
            (folder / name).write_text(json.dumps(entries), encoding="utf-8")
        return folder

    return make


@pytest.fixture
def replay_server() -> Iterator[Callable[..., str]]:
    """replay_server(directory, **ReplayOptions) -> the base URL of a running replay server."""
    with ExitStack() as stack:
        yield lambda directory=REPLAY, **options: stack.enter_context(running_replay_server(directory, **{"latency_ms": 0, **options}))
