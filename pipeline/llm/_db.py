"""SQLite connections shared by the response cache and the call ledger.

One file, WAL mode and a busy timeout, so several processes can read and write at once;
every operation opens a connection, runs one short transaction and closes it.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

BUSY_TIMEOUT_S = 30.0


def initialise(path: Path, schema_sql: str) -> None:
    """Create the file (and its directory), switch it to WAL mode and apply `schema_sql`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(schema_sql)


@contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection whose block is one transaction (committed on success, rolled back on error)."""
    with closing(sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)) as conn:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous=NORMAL")
        with conn:
            yield conn
