"""The run ledger: every input record's state, and every transition with its reason (SQLite).

A run lives in one folder (`outputs/<run>/` by default): `ledger.sqlite` and `tasks/<task_id>/`.
States move forward only along `ALLOWED`; re-applying the current state is a no-op, so steps can be
repeated after a crash without double counting. Every record ends in exactly one terminal state; the
one way back is review: a later or edited annotation changes a decision (accepted <->
rejected_by_review), or a decided task goes back to in_review when it now lacks votes or waits for
an adjudicator, each recorded with its reason like any transition. The disagreements review finds
among a task's (or a formalization's) reviewers are kept in their own table, open until resolved.

    pending ──> extracted ──> checked ──> in_review ──> accepted
       │            │            │            └──────> rejected_by_review
       │            │            └─> error
       │            ├─> rejected_by_checks | error
       │            └─> awaiting_formalization_review ──> extracted (accepted: on to code generation)
       │                                     └──────────> rejected_by_formalization_review | error
       └─> no_danger | error

The formalization review (a run's `review_formalizations` setting) is the detour at the bottom: an
extracted record waits for people to review its formalization before code generation.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from safeforge.common.errors import SafeforgeError, storage_errors

LEDGER_FILE = "ledger.sqlite"
LLM_DB_FILE = "llm.sqlite"
SPOC_DIR = "spoc"  # the SPOC goal-condition files of a run's checked tasks that export
REASONS_FILE = "reasons.txt"  # in <run>/work/<record_id>/: reasons too long for one ledger line
MAX_REASON_CHARS = 400  # the run's LLM response cache and call ledger
TERMINAL = ("no_danger", "rejected_by_checks", "rejected_by_review", "accepted", "error", "rejected_by_formalization_review")
STATES = ("pending", "extracted", "awaiting_formalization_review", "checked", "in_review", *TERMINAL)
ALLOWED = {
    "pending": {"extracted", "no_danger", "error"},
    "extracted": {"checked", "rejected_by_checks", "awaiting_formalization_review", "error"},
    # a verdict of the formalization review: accepted goes back to extracted, for code generation
    "awaiting_formalization_review": {"extracted", "rejected_by_formalization_review", "error"},
    "checked": {"in_review", "error"},
    "in_review": {"accepted", "rejected_by_review"},
    # a later or edited annotation can change a review decision, or re-open it (recorded, with its reason)
    "accepted": {"rejected_by_review", "in_review"},
    "rejected_by_review": {"accepted", "in_review"},
    "error": {"pending"},  # only through an explicit retry
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    record_id TEXT PRIMARY KEY, source TEXT NOT NULL, origin TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '', task_id TEXT, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS transitions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, record_id TEXT NOT NULL, from_state TEXT, to_state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '', detail TEXT, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS records_state ON records(state);
CREATE INDEX IF NOT EXISTS transitions_record ON transitions(record_id);
"""
_DISAGREEMENTS = """
CREATE TABLE IF NOT EXISTS disagreements (
    record_id TEXT NOT NULL, key TEXT NOT NULL, found_at TEXT NOT NULL, kind TEXT NOT NULL, summary TEXT NOT NULL,
    resolved_at TEXT, resolution TEXT, entry TEXT NOT NULL, review TEXT NOT NULL DEFAULT 'tasks',
    PRIMARY KEY (review, record_id, key, found_at))"""


class TransitionError(SafeforgeError):
    """A state change the ledger does not allow (names the record and both states)."""


@dataclass(frozen=True)
class RecordRow:
    record_id: str
    source: str
    origin: str
    state: str
    reason: str
    task_id: str | None
    updated_at: float

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL


@dataclass(frozen=True)
class Transition:
    record_id: str
    from_state: str | None
    to_state: str
    reason: str
    detail: dict | None
    at: float


_ROW = "record_id, source, origin, state, reason, task_id, updated_at"
_TRANSITION = "record_id, from_state, to_state, reason, detail, at"


def _transition(row: tuple) -> Transition:
    return Transition(row[0], row[1], row[2], row[3], json.loads(row[4]) if row[4] else None, row[5])


@dataclass
class RecordState:
    """One record as its work carries it: the ledger row and transitions, read once when the work
    starts (`RunLedger.record_state`), moved through `move`, which writes each transition and keeps
    this object current, so the work never reads the ledger again."""

    row: RecordRow
    history: list[Transition]
    ledger: RunLedger = field(repr=False)

    @property
    def record_id(self) -> str:
        return self.row.record_id

    @property
    def state(self) -> str:
        return self.row.state

    def move(self, to_state: str, reason: str = "", detail: dict | None = None, task_id: str | None = None) -> bool:
        """`RunLedger.transition` for this record; False when it is already in `to_state`."""
        moved = self.ledger._move(self.record_id, to_state, reason, detail, task_id)
        if moved is None:
            return False
        self.row, transition = moved
        self.history.append(transition)
        return True

    def latest(self, to_state: str, from_state: str | None = None) -> Transition | None:
        """The latest transition into `to_state` (from `from_state`, when given), or None."""
        return next(
            (t for t in reversed(self.history) if t.to_state == to_state and (from_state is None or t.from_state == from_state)), None
        )


class RunLedger:
    """Thread-safe access to one run's ledger; several processes may share the file (WAL)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # with WAL: a killed process loses nothing
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.executescript(_SCHEMA)
        self._db.execute(_DISAGREEMENTS)
        if "review" not in self._columns("disagreements"):
            self._scope_disagreements()

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}

    def _scope_disagreements(self) -> None:
        """A ledger from before the formalization review kept disagreements without the review they
        belong to: they are the task review's."""
        with self._transaction() as db:
            if "review" in self._columns("disagreements"):
                return  # another process did it first
            db.execute("ALTER TABLE disagreements RENAME TO disagreements_unscoped")
            db.execute(_DISAGREEMENTS)
            db.execute(
                "INSERT INTO disagreements SELECT record_id, key, found_at, kind, summary, resolved_at, resolution, entry, 'tasks' "
                "FROM disagreements_unscoped"
            )
            db.execute("DROP TABLE disagreements_unscoped")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock, storage_errors(self.path):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def register(self, records: Iterable[tuple[str, str, str]]) -> int:
        """Add (record_id, source, origin) rows as pending; known ids are left alone. Returns how
        many were new."""
        now, added = time.time(), 0
        with self._transaction() as db:
            for record_id, source, origin in records:
                cursor = db.execute(
                    "INSERT OR IGNORE INTO records (record_id, source, origin, state, updated_at) VALUES (?, ?, ?, 'pending', ?)",
                    (record_id, source, origin, now),
                )
                if cursor.rowcount:
                    added += 1
                    db.execute(
                        "INSERT INTO transitions (record_id, from_state, to_state, at) VALUES (?, NULL, 'pending', ?)", (record_id, now)
                    )
        return added

    def transition(self, record_id: str, to_state: str, reason: str = "", detail: dict | None = None, task_id: str | None = None) -> bool:
        """Move a record to `to_state`; False when it is already there (nothing recorded). The
        ledger keeps a reason on one line; a longer one is kept whole in the record's work folder."""
        return self._move(record_id, to_state, reason, detail, task_id) is not None

    def _move(
        self, record_id: str, to_state: str, reason: str, detail: dict | None, task_id: str | None
    ) -> tuple[RecordRow, Transition] | None:
        """`transition`, returning the record's new row and the transition recorded (None: none)."""
        if to_state not in STATES:
            raise TransitionError(f"{record_id}: unknown state {to_state!r}")
        reason = self._one_line(record_id, to_state, reason)
        now = time.time()
        with self._transaction() as db:
            row = db.execute(f"SELECT {_ROW} FROM records WHERE record_id = ?", (record_id,)).fetchone()
            if row is None:
                raise TransitionError(f"{record_id}: not in this run's ledger")
            current = RecordRow(*row)
            if current.state == to_state:
                return None
            if to_state not in ALLOWED.get(current.state, set()):
                raise TransitionError(f"{record_id}: cannot go from {current.state} to {to_state}")
            db.execute(
                "UPDATE records SET state = ?, reason = ?, updated_at = ?, task_id = COALESCE(?, task_id) WHERE record_id = ?",
                (to_state, reason, now, task_id, record_id),
            )
            db.execute(
                "INSERT INTO transitions (record_id, from_state, to_state, reason, detail, at) VALUES (?, ?, ?, ?, ?, ?)",
                (record_id, current.state, to_state, reason, json.dumps(detail) if detail else None, now),
            )
        moved = RecordRow(record_id, current.source, current.origin, to_state, reason, task_id or current.task_id, now)
        return moved, Transition(record_id, current.state, to_state, reason, detail or None, now)

    def record_state(self, record_id: str, source: str, origin: str) -> RecordState:
        """The record's row and transitions, read together when its work starts (a record not in the
        ledger yet is registered as pending first)."""
        with self._transaction() as db:
            now = time.time()
            if db.execute(
                "INSERT OR IGNORE INTO records (record_id, source, origin, state, updated_at) VALUES (?, ?, ?, 'pending', ?)",
                (record_id, source, origin, now),
            ).rowcount:
                db.execute("INSERT INTO transitions (record_id, from_state, to_state, at) VALUES (?, NULL, 'pending', ?)", (record_id, now))
            row = db.execute(f"SELECT {_ROW} FROM records WHERE record_id = ?", (record_id,)).fetchone()
            history = db.execute(f"SELECT {_TRANSITION} FROM transitions WHERE record_id = ? ORDER BY id", (record_id,)).fetchall()
        return RecordState(RecordRow(*row), [_transition(r) for r in history], self)

    def _one_line(self, record_id: str, to_state: str, reason: str) -> str:
        first = " ".join(reason.strip().splitlines()[0].split()) if reason.strip() else ""
        if "\n" not in reason.strip() and len(first) <= MAX_REASON_CHARS:
            return first
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", record_id).lstrip(".") or "_"
        folder = self.path.parent / "work" / name
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / REASONS_FILE, "a", encoding="utf-8") as handle:
            handle.write(f"== {to_state}\n{reason.strip()}\n")
        return f"{first[:MAX_REASON_CHARS]} [full text: work/{name}/{REASONS_FILE}]"

    def get(self, record_id: str) -> RecordRow | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_ROW} FROM records WHERE record_id = ?", (record_id,)).fetchone()
        return RecordRow(*row) if row else None

    def row(self, record_id: str) -> RecordRow:
        """The record's row; TransitionError when the record is not in this run's ledger."""
        found = self.get(record_id)
        if found is None:
            raise TransitionError(f"{record_id}: not in this run's ledger")
        return found

    def records(self, state: str | None = None, source: str | None = None) -> list[RecordRow]:
        query = f"SELECT {_ROW} FROM records"
        clauses, params = [], []
        if state is not None:
            clauses.append("state = ?")
            params.append(state)
        if source is not None:
            clauses.append("source = ?")
            params.append(source)
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY record_id", params).fetchall()
        return [RecordRow(*r) for r in rows]

    def counts(self, by_source: bool = False) -> dict:
        """{state: n}, or {source: {state: n}} with `by_source`."""
        with self._lock:
            rows = self._db.execute("SELECT source, state, COUNT(*) FROM records GROUP BY source, state").fetchall()
        if not by_source:
            totals: dict[str, int] = {}
            for _, state, n in rows:
                totals[state] = totals.get(state, 0) + n
            return totals
        nested: dict[str, dict[str, int]] = {}
        for source, state, n in rows:
            nested.setdefault(source, {})[state] = n
        return nested

    def error_origins(self) -> dict[str, dict[str, int]]:
        """{source: {state a record was in when it failed: n}} over the records now in `error`."""
        with self._lock:
            rows = self._db.execute(
                "SELECT r.source, t.from_state, COUNT(*) FROM records r JOIN transitions t ON t.id = "
                "(SELECT MAX(id) FROM transitions WHERE record_id = r.record_id AND to_state = 'error') "
                "WHERE r.state = 'error' GROUP BY r.source, t.from_state"
            ).fetchall()
        nested: dict[str, dict[str, int]] = {}
        for source, from_state, n in rows:
            nested.setdefault(source, {})[from_state] = n
        return nested

    def reasons(self, state: str) -> list[tuple[str, int]]:
        """The reasons of the records now in `state`, most frequent first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT reason, COUNT(*) AS n FROM records WHERE state = ? GROUP BY reason ORDER BY n DESC, reason", (state,)
            ).fetchall()
        return [(reason, n) for reason, n in rows]

    def transition_details(self, to_state: str) -> list[tuple[str, dict | None]]:
        """(source, detail) of the latest transition into `to_state` of every record that made one."""
        with self._lock:
            rows = self._db.execute(
                "SELECT r.source, t.detail FROM transitions t JOIN records r ON r.record_id = t.record_id WHERE t.id IN "
                "(SELECT MAX(id) FROM transitions WHERE to_state = ? GROUP BY record_id) ORDER BY t.id",
                (to_state,),
            ).fetchall()
        return [(source, json.loads(detail) if detail else None) for source, detail in rows]

    def reached(self, state: str) -> dict[str, int]:
        """{source: n}: the records that ever entered `state`, whatever their state now."""
        with self._lock:
            rows = self._db.execute(
                "SELECT r.source, COUNT(DISTINCT t.record_id) FROM transitions t JOIN records r ON r.record_id = t.record_id "
                "WHERE t.to_state = ? GROUP BY r.source",
                (state,),
            ).fetchall()
        return {source: n for source, n in rows}

    def last_change(self) -> float | None:
        """When the latest transition was recorded (None for an empty ledger)."""
        with self._lock:
            return self._db.execute("SELECT MAX(at) FROM transitions").fetchone()[0]

    def history(self, record_id: str) -> list[Transition]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_TRANSITION} FROM transitions WHERE record_id = ? ORDER BY id", (record_id,)).fetchall()
        return [_transition(r) for r in rows]

    def set_disagreements(self, record_id: str, entries: list[dict], review: str = "tasks") -> bool:
        """Store the disagreements of a record in `review` ("tasks" or "formalizations"): every one, open or
        resolved, each a dict with key, found_at, kind, summary, resolved_at, resolution; False when
        they are already stored."""
        rows = sorted(
            (
                record_id,
                e["key"],
                e["found_at"],
                e["kind"],
                e["summary"],
                e.get("resolved_at"),
                e.get("resolution"),
                json.dumps(e, sort_keys=True),
                review,
            )
            for e in entries
        )
        with self._transaction() as db:
            stored = db.execute(
                "SELECT record_id, key, found_at, kind, summary, resolved_at, resolution, entry, review FROM disagreements "
                "WHERE record_id = ? AND review = ? ORDER BY record_id, key, found_at",
                (record_id, review),
            ).fetchall()
            if [tuple(r) for r in stored] == rows:
                return False
            db.execute("DELETE FROM disagreements WHERE record_id = ? AND review = ?", (record_id, review))
            db.executemany("INSERT INTO disagreements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return True

    def disagreements(self, open_only: bool = False, review: str = "tasks") -> dict[str, list[dict]]:
        """record_id -> its disagreements in `review` (only the unresolved ones with `open_only`), oldest first."""
        query = "SELECT record_id, entry FROM disagreements WHERE review = ?" + (" AND resolved_at IS NULL" if open_only else "")
        with self._lock:
            rows = self._db.execute(query + " ORDER BY record_id, found_at, key", (review,)).fetchall()
        found: dict[str, list[dict]] = {}
        for record_id, entry in rows:
            found.setdefault(record_id, []).append(json.loads(entry))
        return found


@dataclass
class RunStore:
    """One run's folder: the ledger and the task folders; `with RunStore(root) as store:` closes its ledger."""

    root: Path

    def __post_init__(self):
        self.root = Path(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.tasks_dir.mkdir(exist_ok=True)
        self.ledger = RunLedger(self.root / LEDGER_FILE)

    def close(self) -> None:
        self.ledger.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    def task_dir(self, task_id: str) -> Path:
        return self.tasks_dir / task_id

    @property
    def spoc_dir(self) -> Path:
        """The SPOC goal-condition files of the run's checked tasks that export (written by generation)."""
        return self.root / SPOC_DIR

    @property
    def llm_db(self) -> Path:
        """The run's LLM response cache and call ledger."""
        return self.root / LLM_DB_FILE
