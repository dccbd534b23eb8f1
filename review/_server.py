"""Starting and stopping a local Label Studio server, run from its own virtual environment.

The server (`label-studio`, pinned in review/labelstudio-constraints.txt) lives in
`.venv-labelstudio/`, installed by scripts/setup_labelstudio.sh together with a template data dir
whose database is already migrated: a new data dir is a copy of it, so a server starts in seconds.
Its database is SQLite (one reviewer: the default) or a local PostgreSQL server (a team, several
annotators writing at once: `_postgres`), chosen when the data dir is made and kept with it. It
runs in its own session on 127.0.0.1, with the admin user and API token given through its
environment (never its command line), no update check, analytics or error reporting, and logs to
`<data_dir>/server.log`. `<data_dir>/server.json` names the running process so that another
command (`safeforge review server stop`) can stop it; a PostgreSQL server is started before Label
Studio and stopped after it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import httpx

from safeforge.common.processes import ProcessRecord, spawn, stop, wait_ready
from safeforge.review import _postgres
from safeforge.review._errors import ServerError
from safeforge.settings import Settings

LABEL_STUDIO_VERSION = "1.23.2"
SETUP_HINT = "run scripts/setup_labelstudio.sh"
_TEMPLATE_MARKER = ".safeforge-template"
_HANDLE_FILE = "server.json"
_LOG_FILE = "server.log"
_DATABASE = "label_studio.sqlite3"
_LISTENING = re.compile(r"Starting development server at http://[^:/]+:(\d+)/")
TASK_LOCK_TTL_S = 300  # Label Studio's default is a day: an abandoned task would leave the queue for that long
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "SSL_CERT_FILE")
DATABASES = ("sqlite", "postgresql")


@dataclass(frozen=True)
class ServerHandle:
    """A running server: its process and where it listens. Holds no secrets."""

    process: ProcessRecord
    port: int
    data_dir: str
    database: str = "sqlite"
    """sqlite, or postgresql: a local PostgreSQL server of its own."""
    postgres: ProcessRecord | None = None
    """That PostgreSQL server's process."""

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def url(self) -> str:
        return self.process.url

    @property
    def log_path(self) -> str:
        return self.process.log

    def is_running(self) -> bool:
        return self.process.is_running()

    def to_dict(self) -> dict:
        return {
            "pid": self.pid,
            "url": self.url,
            "port": self.port,
            "data_dir": self.data_dir,
            "log_path": self.log_path,
            "database": self.database,
            "postgres_pid": self.postgres.pid if self.postgres else None,
        }


def labelstudio_venv() -> Path:
    """The server's virtual environment (SAFEFORGE_LABELSTUDIO_VENV, default .venv-labelstudio/)."""
    return Settings.load().labelstudio_venv


def template_data_dir(venv: Path | None = None) -> Path:
    """The migrated template data dir that scripts/setup_labelstudio.sh prepares."""
    return (venv or labelstudio_venv()) / "template-data"


def check_installation(venv: Path | None = None, database: str = "sqlite") -> Path:
    """The `label-studio` executable; ServerError naming the setup script when it (or, for
    `database="postgresql"`, PostgreSQL) is missing."""
    venv = venv or labelstudio_venv()
    executable = venv / "bin" / "label-studio"
    if not executable.exists():
        raise ServerError(f"Label Studio is not installed ({executable} is missing): {SETUP_HINT}")
    marker = template_data_dir(venv) / _TEMPLATE_MARKER
    expected = f"label-studio {LABEL_STUDIO_VERSION}"
    if not marker.exists() or marker.read_text().strip() != expected:
        raise ServerError(f"the migrated template data dir {marker.parent} is missing or not for {expected}: {SETUP_HINT}")
    if database == "postgresql":
        _postgres.bin_dir()
    return executable


def prepare_postgres_template(venv: Path | None = None) -> Path:
    """Make the migrated PostgreSQL template team servers start from, unless it is there already
    (scripts/setup.sh calls this; otherwise the first PostgreSQL server makes it)."""
    venv = venv or labelstudio_venv()
    made_for = f"label-studio {LABEL_STUDIO_VERSION}"
    if _postgres.template_ready(venv, made_for):
        return venv / _postgres.TEMPLATE_DIR
    return _postgres.make_template(venv, check_installation(venv), made_for)


def database_of(data_dir: str | os.PathLike) -> str | None:
    """The database a data dir holds: sqlite, postgresql, or None for a new one."""
    data_dir = Path(data_dir)
    if _postgres.Cluster(data_dir.resolve()).exists():
        return "postgresql"
    return "sqlite" if (data_dir / _DATABASE).exists() else None


def choose_database(data_dir: str | os.PathLike, requested: str | None) -> str:
    """The data dir's database: the one it holds, else `requested`, else SQLite; ServerError when
    `requested` is not the one it holds (a data dir never changes database)."""
    held = database_of(data_dir)
    if requested is not None and requested not in DATABASES:
        raise ServerError(f"unknown database {requested!r}: choose {' or '.join(DATABASES)}")
    if held and requested and held != requested:
        raise ServerError(
            f"{data_dir} holds a {held} database, not {requested}: use another data dir for a {requested} server "
            f"(--data-dir or SAFEFORGE_LABELSTUDIO_DATA), or drop the {requested} choice (SAFEFORGE_LABELSTUDIO_DATABASE)"
        )
    return held or requested or "sqlite"


def prepare_data_dir(data_dir: str | os.PathLike, venv: Path | None = None, database: str = "sqlite") -> Path:
    """Make `data_dir` usable: for SQLite a copy of the migrated template unless it holds a database
    already; for PostgreSQL, its cluster unless it has one (a copy of the PostgreSQL template, made
    when missing)."""
    data_dir = Path(data_dir).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    if database == "postgresql":
        if not _postgres.Cluster(data_dir).exists():
            _postgres.make_cluster(data_dir, prepare_postgres_template(venv))
        return data_dir
    if (data_dir / _DATABASE).exists():
        return data_dir
    template = template_data_dir(venv)
    shutil.copytree(template, data_dir, dirs_exist_ok=True, ignore=shutil.ignore_patterns(_TEMPLATE_MARKER, ".env"))
    return data_dir


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _server_env(data_dir: Path, username: str, password: str, token: str, lock_ttl: int) -> dict[str, str]:
    env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    env.update(
        {
            "LANG": env.get("LANG", "C.UTF-8"),
            "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
            "LABEL_STUDIO_USERNAME": username,
            "LABEL_STUDIO_PASSWORD": password,
            "LABEL_STUDIO_USER_TOKEN": token,
            "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",
            # an opened task is locked for its annotator this long, then returns to the queue
            "LABEL_STUDIO_TASK_LOCK_TTL": str(lock_ttl),
            "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
            "LABEL_STUDIO_SENTRY_DSN": "",
            "LABEL_STUDIO_FRONTEND_SENTRY_DSN": "",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def start_server(
    data_dir: str | os.PathLike,
    port: int,
    username: str,
    password: str,
    token: str,
    *,
    database: str | None = None,
    venv: Path | None = None,
    timeout: float = 180.0,
    task_lock_ttl: int = TASK_LOCK_TTL_S,
) -> ServerHandle:
    """Start Label Studio on 127.0.0.1:`port` with `data_dir` (created from the template when new)
    and wait until it answers. `database` is sqlite or postgresql for a new data dir (default
    sqlite); an existing one keeps its own (`choose_database`). The admin `username`/`password` and
    API `token` are created on first start; an opened task is locked for its annotator for
    `task_lock_ttl` seconds. Returns once healthy; ServerError (with the log's tail) when it does
    not come up."""
    if len(token) < 6:
        raise ServerError("the API token must be at least 6 characters (Label Studio ignores shorter ones)")
    database = choose_database(data_dir, database)
    executable = check_installation(venv, database)
    if _port_in_use(port):
        raise ServerError(
            f"port {port} on 127.0.0.1 is already in use: stop what runs there (`safeforge review server status`) or choose another port"
        )
    data_dir = prepare_data_dir(data_dir, venv, database)
    env = _server_env(data_dir, username, password, token, task_lock_ttl)
    postgres = None
    if database == "postgresql":
        cluster = _postgres.Cluster(data_dir)
        postgres = _postgres.start_postgres(cluster)
        env.update(cluster.label_studio_env())
    log_path = data_dir / _LOG_FILE
    offset = log_path.stat().st_size if log_path.exists() else 0
    process = spawn(
        "label-studio",
        [
            str(executable),
            "start",
            "--data-dir",
            str(data_dir),
            "--no-browser",
            "--internal-host",
            "127.0.0.1",
            "--port",
            str(port),
            "--enable-legacy-api-token",
        ],
        env=env,
        log=log_path,
        url=f"http://127.0.0.1:{port}",
        cwd=data_dir,
    )
    handle = ServerHandle(process, port, str(data_dir), database, postgres)
    try:
        wait_ready(process, lambda: _answers(handle, offset), timeout, ServerError)
    except ServerError:
        if database == "postgresql":
            _postgres.stop_postgres(_postgres.Cluster(data_dir))
        raise
    process.save(data_dir / _HANDLE_FILE)
    return handle


def _answers(handle: ServerHandle, log_offset: int) -> bool:
    """Whether the server listens on its port (read from its log) and its health check passes."""
    with open(handle.log_path, "rb") as log:
        log.seek(log_offset)
        match = _LISTENING.search(log.read().decode(errors="replace"))
    if match is None:
        return False
    if int(match.group(1)) != handle.port:
        raise ServerError(f"port {handle.port} was taken while Label Studio started (it moved to {match.group(1)}): choose another port")
    try:
        return httpx.get(f"{handle.url}/health", timeout=2, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False


def stop_server(handle: ServerHandle, timeout: float = 15.0) -> None:
    """Stop the server and every process of its session, then its PostgreSQL server (its data
    stays); a server already gone is fine. Returns once its port is closed (a process whose main
    thread is gone may still be closing others)."""
    left = stop(handle.process, timeout)
    if left:
        raise ServerError(f"Label Studio processes {left} survived SIGKILL")
    deadline = time.monotonic() + 5.0
    while _port_in_use(handle.port) and time.monotonic() < deadline:
        time.sleep(0.1)
    handle_file = Path(handle.data_dir) / _HANDLE_FILE
    saved = ProcessRecord.load(handle_file)
    if saved is not None and saved.pid == handle.pid:
        handle_file.unlink(missing_ok=True)
    stop_database(handle.data_dir)


def stop_database(data_dir: str | os.PathLike) -> bool:
    """Stop the PostgreSQL server of a data dir, if one runs (e.g. left by a Label Studio that
    crashed); whether one was running."""
    cluster = _postgres.Cluster(Path(data_dir).resolve())
    if cluster.running() is None:
        return False
    _postgres.stop_postgres(cluster)
    return True


def running_server(data_dir: str | os.PathLike) -> ServerHandle | None:
    """The server started on `data_dir` (by this or another process), if it still runs."""
    data_dir = Path(data_dir).resolve()
    process = ProcessRecord.load(data_dir / _HANDLE_FILE)
    if process is None or not process.is_running():
        return None
    postgres = _postgres.Cluster(data_dir).running()
    return ServerHandle(process, urlparse(process.url).port or 80, str(data_dir), database_of(data_dir) or "sqlite", postgres)
