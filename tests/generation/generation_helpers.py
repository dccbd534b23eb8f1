"""Helpers of the generation tests: the hand-written replay files, fast LLM client settings, a
helper that runs `generate_run` on a run folder, and the replay server's admin endpoints."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import urllib.request
from pathlib import Path
from typing import Any

from tests_paths import REPO, SAMPLES

from safeforge.generation import GenerationSettings, RunSummary, generate_run
from safeforge.llm import LLMClient, LLMConfig
from safeforge.runs.ledger import RunStore
from safeforge.sources import Record

REPLAY = REPO / "pipeline" / "llm" / "replay_responses"
FAST_SETTINGS = GenerationSettings(planner_time_limit=30)
HOUSEHOLD = SAMPLES / "neiss" / "neiss_2014_2023_code_replaced_100_samples.csv"
"""The NEISS sample of household injuries; the demo adds its knife and cabinet records (products 464, 4056)."""
DEMO_PRODUCTS = [464, 4056]


def fast_config(base_url: str, db_path: Path, **overrides: Any) -> LLMConfig:
    """A real client config with tiny backoffs and a short timeout."""
    values: dict[str, Any] = {
        "base_url": base_url,
        "model": "deepseek-chat",
        "db_path": db_path,
        "max_attempts": 3,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        "retry_after_max_s": 2.0,
        "timeout_s": 5.0,
        "max_concurrency": 8,
    }
    return LLMConfig(**{**values, **overrides})


def run_records(
    root: Path, records: list[Record], config: LLMConfig, settings: GenerationSettings = FAST_SETTINGS, **kwargs: Any
) -> RunSummary:
    """generate_run over `records` into the run folder `root` (opened and closed here)."""
    store = RunStore(root)

    async def go() -> RunSummary:
        async with LLMClient(config) as client:
            return await generate_run(store, records, client, settings, **kwargs)

    try:
        return asyncio.run(go())
    finally:
        store.ledger.close()


def household_records() -> list[Record]:
    """The two NEISS records the demo adds to the bundled sample's first ones (scripts/demo.sh)."""
    from safeforge.sources import iter_records

    return list(iter_records("neiss", HOUSEHOLD, products=DEMO_PRODUCTS))


def admin(base_url: str, path: str, body: dict | None = None) -> dict:
    root = base_url.removesuffix("/v1")
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(root + path, data=data, method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def requests_served(base_url: str) -> int:
    return admin(base_url, "/admin/stats")["requests"]


def folder_digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, by relative path."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def replay_entries(record_id: str) -> list[dict]:
    return json.loads((REPLAY / f"{record_id}.json").read_text(encoding="utf-8"))


def ledger_states(root: Path) -> dict[str, tuple[str, str]]:
    """record_id -> (state, reason), read from a run's ledger file."""
    with sqlite3.connect(root / "ledger.sqlite") as db:
        rows = db.execute("SELECT record_id, state, reason FROM records").fetchall()
    return {record_id: (state, reason) for record_id, state, reason in rows}
