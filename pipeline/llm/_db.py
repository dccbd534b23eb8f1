"""SQLite access shared by the response cache and the call ledger.

One file in WAL mode with a busy timeout, so several processes can read and write at once.
Each Database keeps its connection open between transactions (closing the last connection
to a WAL file checkpoints it, which would make every operation slow); transactions are short.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from safeforge.common.errors import storage_errors

BUSY_TIMEOUT_S = 30.0


class Database:
    """One SQLite file, usable from any thread of this process."""

    def __init__(self, path: Path, schema_sql: str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        with self.transaction() as conn:
            conn.executescript(schema_sql)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One transaction: committed when the block ends, rolled back if it raises."""
        with self._lock, storage_errors(self.path):
            conn = self._connection()
            with conn:
                yield conn

    def close(self) -> None:
        """Release the connection; a later transaction opens a new one."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
