"""The task locks a Label Studio server holds now: an annotator who opens a task in the label
stream holds it until they submit or the lock expires (`review server start --lock-ttl`). Label
Studio community's API lists no other user's lock, so they are read, read-only, from the database
of a server whose data dir is on this machine (SQLite, or the data dir's PostgreSQL)."""

from __future__ import annotations

import sqlite3
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from safeforge.review import _postgres
from safeforge.review._errors import ServerError

_SQLITE = "label_studio.sqlite3"
_QUERY = (
    "SELECT u.email, l.task_id FROM tasks_tasklock l JOIN task t ON t.id = l.task_id JOIN htx_user u ON u.id = l.user_id "
    "WHERE t.project_id = {project} AND l.expire_at > {now}"
)


def held_locks(data_dir: Path, project_id: int) -> dict[str, list[int]] | None:
    """User e-mail -> Label Studio ids of the project's tasks they hold now; None when the server's
    database cannot be read from here."""
    try:
        if _postgres.Cluster(Path(data_dir).resolve()).exists():
            return _from_postgres(Path(data_dir).resolve(), int(project_id))
        if (Path(data_dir) / _SQLITE).is_file():
            return _from_sqlite(Path(data_dir) / _SQLITE, int(project_id))
    except (OSError, sqlite3.Error, subprocess.SubprocessError, ServerError, ValueError):
        return None
    return None


def _grouped(rows) -> dict[str, list[int]]:
    locks: dict[str, list[int]] = {}
    for email, task_id in rows:
        locks.setdefault(str(email), []).append(int(task_id))
    return locks


def _from_sqlite(path: Path, project_id: int) -> dict[str, list[int]]:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")  # as Django stores an aware datetime in SQLite
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
        return _grouped(db.execute(_QUERY.format(project=project_id, now="?"), (now,)).fetchall())


def _from_postgres(data_dir: Path, project_id: int) -> dict[str, list[int]] | None:
    cluster = _postgres.Cluster(data_dir)
    if cluster.running() is None:
        return None
    psql = _postgres.bin_dir() / "psql"
    env = cluster.label_studio_env()
    command = [str(psql), "-h", env["POSTGRE_HOST"], "-p", env["POSTGRE_PORT"], "-U", env["POSTGRE_USER"], "-d", env["POSTGRE_NAME"]]
    query = _QUERY.format(project=project_id, now="now()")
    done = subprocess.run([*command, "-At", "-F", "\t", "-c", query], capture_output=True, text=True, timeout=10, check=True)
    return _grouped(line.split("\t") for line in done.stdout.splitlines() if line.strip())
