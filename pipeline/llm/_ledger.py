"""The call ledger: one SQLite row per HTTP attempt or cache hit, and per-stage summaries.

Outcomes: ok, cache_hit, retry_<reason> (rate_limit, server_error, timeout, connection,
schema_unsupported), validation_error, error. Error text is redacted before it gets here;
no headers or client configuration are stored.
"""

from __future__ import annotations

import time
from dataclasses import astuple, dataclass, field, fields
from pathlib import Path

from pipeline.llm import _db

_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    stage TEXT NOT NULL,
    record_id TEXT NOT NULL,
    model TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    tokens_cached INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cost_usd REAL,
    error TEXT,
    cache_note TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_by_record ON calls (stage, record_id);
"""


@dataclass(frozen=True)
class LedgerRow:
    """One HTTP attempt (attempt >= 1) or cache hit (attempt 0)."""

    stage: str
    record_id: str
    model: str
    attempt: int
    outcome: str
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None
    error: str | None = None
    cache_note: str | None = None
    """Why the cache missed (see ResponseCache.explain_miss); None on hits."""
    created_at: float = field(default_factory=time.time)


_COLUMNS = ", ".join(f.name for f in fields(LedgerRow))


@dataclass(frozen=True)
class StageSummary:
    """Totals of one stage. `calls` counts HTTP attempts (cache hits are separate);
    `cost_usd` sums the priced attempts, `unpriced_calls` counts the others."""

    stage: str
    calls: int
    cache_hits: int
    retries: int
    failures: int
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    cost_usd: float
    unpriced_calls: int


class CallLedger:
    """Append-only record of calls, in one SQLite file (safe across processes)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._db = _db.Database(self.path, _SCHEMA_SQL)

    def close(self) -> None:
        self._db.close()

    def record(self, row: LedgerRow) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT INTO calls ({_COLUMNS}) VALUES ({', '.join('?' * len(fields(LedgerRow)))})",
                astuple(row),
            )

    def rows(self, stage: str | None = None, record_id: str | None = None) -> list[LedgerRow]:
        """Rows in insertion order, optionally for one stage and/or record."""
        where = [
            (name, value) for name, value in (("stage", stage), ("record_id", record_id)) if value is not None
        ]
        clause = " AND ".join(f"{name} = ?" for name, _ in where) or "1"
        with self._db.transaction() as conn:
            found = conn.execute(
                f"SELECT {_COLUMNS} FROM calls WHERE {clause} ORDER BY id", [value for _, value in where]
            ).fetchall()
        return [LedgerRow(**dict(row)) for row in found]

    def summary(self) -> list[StageSummary]:
        """Calls, tokens and dollars per stage, sorted by stage."""
        with self._db.transaction() as conn:
            found = conn.execute("""
                SELECT stage,
                       SUM(outcome != 'cache_hit') AS calls,
                       SUM(outcome = 'cache_hit') AS cache_hits,
                       SUM(outcome LIKE 'retry_%') AS retries,
                       SUM(outcome = 'error') AS failures,
                       SUM(tokens_in) AS tokens_in,
                       SUM(tokens_out) AS tokens_out,
                       SUM(tokens_cached) AS tokens_cached,
                       COALESCE(SUM(cost_usd), 0.0) AS cost_usd,
                       SUM(outcome != 'cache_hit' AND cost_usd IS NULL) AS unpriced_calls
                FROM calls GROUP BY stage ORDER BY stage
                """).fetchall()
        return [StageSummary(**dict(row)) for row in found]
