"""The call ledger: one SQLite row per HTTP attempt or cache hit, and per-stage summaries.

Outcomes: ok, cache_hit, retry_<reason> (rate_limit, server_error, timeout, connection,
schema_unsupported), validation_error (a reply sent back for repair), validation_failed (the
repaired reply was invalid too: the call failed), error (the call failed for good), unknown (an
attempt that was in flight when its process ended: sent, maybe paid, never answered here).
A call that failed — on HTTP errors or on validation — counts as one failure. Error text is redacted before it gets here;
no headers or client configuration are stored.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, field, fields
from pathlib import Path

from safeforge.llm import _db

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
    created_at REAL NOT NULL,
    pid INTEGER,
    retry_delay_s REAL
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
    retry_delay_s: float | None = None
    """The wait chosen before the next attempt (retry_* outcomes; at least what Retry-After asked)."""


_NAMES = tuple(f.name for f in fields(LedgerRow))
_COLUMNS = ", ".join(_NAMES)
_UPDATE_ROW = f"UPDATE calls SET {', '.join(f'{name} = ?' for name in _NAMES)} WHERE id = ?"
_INSERT_ROW = f"INSERT INTO calls ({_COLUMNS}) VALUES ({', '.join('?' * len(_NAMES))})"


def _values(row: LedgerRow) -> tuple[object, ...]:
    return tuple(getattr(row, name) for name in _NAMES)  # flat values: no deep copy as astuple makes


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


IN_FLIGHT = "in_flight"
UNKNOWN = "unknown"


class CallLedger:
    """Record of calls, in one SQLite file (safe across processes). An HTTP attempt is written
    before it is sent (`begin`, outcome in_flight) and completed when it ends (`finish`); attempts
    left in flight by a process that no longer exists become `unknown` when a ledger is opened."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._db = _db.Database(self.path, _SCHEMA_SQL)
        with self._db.transaction() as conn:
            _add_column(conn, "pid INTEGER")  # ledgers from before in-flight rows
            _add_column(conn, "retry_delay_s REAL")  # ledgers from before retry delays were kept
            pids = [row["pid"] for row in conn.execute("SELECT DISTINCT pid FROM calls WHERE outcome = ?", (IN_FLIGHT,))]
            for pid in pids:
                if pid is None or not _alive(pid):
                    conn.execute(
                        "UPDATE calls SET outcome = ?, error = ? WHERE outcome = ? AND pid IS ?",
                        (UNKNOWN, "in flight when its process ended: sent, maybe paid, never answered here", IN_FLIGHT, pid),
                    )

    def begin(self, stage: str, record_id: str, model: str, attempt: int) -> int:
        """Write an attempt about to be sent; its row id, for `finish`."""
        with self._db.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO calls (stage, record_id, model, attempt, outcome, tokens_in, tokens_out, tokens_cached, "
                "latency_s, created_at, pid) VALUES (?, ?, ?, ?, ?, 0, 0, 0, 0.0, ?, ?)",
                (stage, record_id, model, attempt, IN_FLIGHT, time.time(), os.getpid()),
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    def finish(self, row_id: int, row: LedgerRow) -> None:
        """Complete the attempt `begin` wrote."""
        with self._db.transaction() as conn:
            conn.execute(_UPDATE_ROW, (*_values(row), row_id))

    def close(self) -> None:
        self._db.close()

    def record(self, row: LedgerRow) -> None:
        with self._db.transaction() as conn:
            conn.execute(_INSERT_ROW, _values(row))

    def rows(self, stage: str | None = None, record_id: str | None = None) -> list[LedgerRow]:
        """Rows in insertion order, optionally for one stage and/or record."""
        where = [(name, value) for name, value in (("stage", stage), ("record_id", record_id)) if value is not None]
        clause = " AND ".join(f"{name} = ?" for name, _ in where) or "1"
        with self._db.transaction() as conn:
            found = conn.execute(f"SELECT {_COLUMNS} FROM calls WHERE {clause} ORDER BY id", [value for _, value in where]).fetchall()
        return [LedgerRow(**dict(row)) for row in found]

    def summary(self) -> list[StageSummary]:  # in-flight attempts are not counted until they end
        """Calls, tokens and dollars per stage, sorted by stage."""
        with self._db.transaction() as conn:
            found = conn.execute("""
                SELECT stage,
                       SUM(outcome != 'cache_hit') AS calls,
                       SUM(outcome = 'cache_hit') AS cache_hits,
                       SUM(outcome LIKE 'retry_%') AS retries,
                       SUM(outcome IN ('error', 'validation_failed', 'refused_context')) AS failures,
                       SUM(tokens_in) AS tokens_in,
                       SUM(tokens_out) AS tokens_out,
                       SUM(tokens_cached) AS tokens_cached,
                       COALESCE(SUM(cost_usd), 0.0) AS cost_usd,
                       SUM(outcome != 'cache_hit' AND cost_usd IS NULL) AS unpriced_calls
                FROM calls WHERE outcome != 'in_flight' GROUP BY stage ORDER BY stage
                """).fetchall()
        return [StageSummary(**dict(row)) for row in found]


def _add_column(conn: sqlite3.Connection, column: str) -> None:
    """Add `column` ("name TYPE") to the calls table of an older ledger, unless it is there (another
    process opening the same old ledger may have added it meanwhile)."""
    name = column.split()[0]
    if name in {row["name"] for row in conn.execute("PRAGMA table_info(calls)")}:
        return
    try:
        conn.execute(f"ALTER TABLE calls ADD COLUMN {column}")
    except sqlite3.OperationalError as exc:
        if "duplicate column" not in str(exc):
            raise


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
