"""Content-addressed response cache (SQLite), with explanations of misses.

The key hashes the request's components: model, endpoint host, messages, decoding parameters,
response schema and prompt-template hash. The components are stored beside each response (the
messages as one hash each), so a miss can be explained against the nearest entry of the same
(stage, record_id). Only validated responses are stored; nothing about the client's
configuration (headers, API key) is.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from safeforge.llm import _db

_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    stage TEXT NOT NULL,
    record_id TEXT NOT NULL,
    components TEXT NOT NULL,
    response_text TEXT NOT NULL,
    finish_reason TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_by_record ON responses (stage, record_id);
"""
_SCALAR_COMPONENTS = ("model", "endpoint", "template_hash", "schema")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheRequest:
    """What identifies a response. `stage` and `record_id` label the entry (for explanations);
    they are not part of the key."""

    stage: str
    record_id: str
    model: str
    endpoint: str
    messages: list[dict[str, Any]]
    decoding: dict[str, Any]
    schema: str
    """Either "text" or "<SchemaName>:<hash of its JSON schema>"."""
    template_hash: str
    components: dict[str, Any] = field(init=False, repr=False, compare=False)
    key: str = field(init=False, repr=False, compare=False)
    """The hash of the components: the cache key."""

    def __post_init__(self) -> None:
        components = {
            "model": self.model,
            "endpoint": self.endpoint,
            "template_hash": self.template_hash,
            "schema": self.schema,
            "decoding": self.decoding,
            "messages": [sha256_hex(canonical_json(m))[:16] for m in self.messages],
        }
        text = canonical_json(components)
        object.__setattr__(self, "components", json.loads(text))
        object.__setattr__(self, "key", sha256_hex(text))


@dataclass(frozen=True)
class CachedResponse:
    text: str
    finish_reason: str | None


def _shown(value: Any) -> str:
    return "unset" if value is None else str(value)


def describe_differences(cached: dict[str, Any], requested: dict[str, Any]) -> list[str]:
    """One line per component that differs, cached value first."""
    lines = [
        f"{name} differs: {_shown(cached.get(name))} (cached) vs {_shown(requested.get(name))} (requested)"
        for name in _SCALAR_COMPONENTS
        if cached.get(name) != requested.get(name)
    ]
    cached_decoding, requested_decoding = cached.get("decoding", {}), requested.get("decoding", {})
    lines += [
        f"decoding {name} differs: {_shown(cached_decoding.get(name))} (cached) vs {_shown(requested_decoding.get(name))} (requested)"
        for name in sorted(cached_decoding.keys() | requested_decoding.keys())
        if cached_decoding.get(name) != requested_decoding.get(name)
    ]
    cached_messages, requested_messages = cached.get("messages", []), requested.get("messages", [])
    lines += [
        f"messages[{index}] differs"
        for index, (old, new) in enumerate(zip(cached_messages, requested_messages, strict=False))
        if old != new
    ]
    if len(cached_messages) != len(requested_messages):
        lines.append(f"message count differs: {len(cached_messages)} (cached) vs {len(requested_messages)} (requested)")
    return lines


class ResponseCache:
    """Validated responses by request key, in one SQLite file (safe across processes)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._db = _db.Database(self.path, _SCHEMA_SQL)

    def close(self) -> None:
        self._db.close()

    def get(self, request: CacheRequest) -> CachedResponse | None:
        with self._db.transaction() as conn:
            return self._response(conn, request)

    def lookup(self, request: CacheRequest) -> tuple[CachedResponse | None, str | None]:
        """The cached response, or None and why `request` misses (see `explain_miss`), in one
        transaction."""
        with self._db.transaction() as conn:
            if (hit := self._response(conn, request)) is not None:
                return hit, None
            neighbours = self._neighbours(conn, request)
        return None, self._nearest(request, neighbours)

    @staticmethod
    def _response(conn: sqlite3.Connection, request: CacheRequest) -> CachedResponse | None:
        row = conn.execute("SELECT response_text, finish_reason FROM responses WHERE key = ?", (request.key,)).fetchone()
        return None if row is None else CachedResponse(row["response_text"], row["finish_reason"])

    def put(self, request: CacheRequest, response: CachedResponse) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    request.key,
                    request.stage,
                    request.record_id,
                    canonical_json(request.components),
                    response.text,
                    response.finish_reason,
                    time.time(),
                ),
            )

    def explain_miss(self, request: CacheRequest) -> str | None:
        """Why `request` misses: how it differs from the nearest entry of the same
        (stage, record_id). None when it would hit."""
        return self.lookup(request)[1]

    @staticmethod
    def _neighbours(conn: sqlite3.Connection, request: CacheRequest) -> list[str]:
        rows = conn.execute(
            "SELECT components FROM responses WHERE stage = ? AND record_id = ? ORDER BY created_at DESC",
            (request.stage, request.record_id),
        ).fetchall()
        return [row["components"] for row in rows]

    @staticmethod
    def _nearest(request: CacheRequest, neighbours: list[str]) -> str:
        if not neighbours:
            return f"no cached response for stage {request.stage!r}, record {request.record_id!r}"
        candidates = [describe_differences(json.loads(components), request.components) for components in neighbours]
        nearest: list[str] = min(candidates, key=len)  # min keeps the newest of equally near entries
        return "; ".join(nearest)
