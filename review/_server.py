"""Starting and stopping a local Label Studio server, run from its own virtual environment.

The server (`label-studio`, pinned in review/labelstudio-constraints.txt) lives in
`.venv-labelstudio/`, installed by scripts/setup_labelstudio.sh together with a template data dir
whose database is already migrated: a new data dir is a copy of it, so a server starts in seconds.
It runs in its own process group on 127.0.0.1, with SQLite, the admin user and API token given
through its environment (never its command line), no update check, analytics or error reporting,
and logs to `<data_dir>/server.log`. `<data_dir>/server.json` names the running process so that
another command (`safeforge review server stop`) can stop it.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import psutil

from pipeline.common.errors import SafeforgeError
from pipeline.settings import Settings

LABEL_STUDIO_VERSION = "1.23.2"
SETUP_HINT = "run scripts/setup_labelstudio.sh"
_TEMPLATE_MARKER = ".safeforge-template"
_HANDLE_FILE = "server.json"
_LOG_FILE = "server.log"
_DATABASE = "label_studio.sqlite3"
_LISTENING = re.compile(r"Starting development server at http://[^:/]+:(\d+)/")
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "SSL_CERT_FILE")
_OWN_CHILDREN: dict[int, subprocess.Popen] = {}  # servers this process started, to reap on stop


class ServerError(SafeforgeError):
    """The server cannot be installed, started or stopped; the message says what to do."""


@dataclass(frozen=True)
class ServerHandle:
    """A running server: its process (group leader) and where it listens. Holds no secrets."""

    pid: int
    url: str
    port: int
    data_dir: str
    log_path: str
    started_at: float
    create_time: float
    """The process's start time (psutil), so that a recycled pid is never mistaken for it."""

    def is_running(self) -> bool:
        try:
            process = psutil.Process(self.pid)
            return (abs(process.create_time() - self.create_time) < 1.0
                    and process.status() != psutil.STATUS_ZOMBIE)
        except psutil.Error:
            return False


def labelstudio_venv() -> Path:
    """The server's virtual environment (SAFEFORGE_LABELSTUDIO_VENV, default .venv-labelstudio/)."""
    return Settings.load().labelstudio_venv


def template_data_dir(venv: Path | None = None) -> Path:
    """The migrated template data dir that scripts/setup_labelstudio.sh prepares."""
    return (venv or labelstudio_venv()) / "template-data"


def check_installation(venv: Path | None = None) -> Path:
    """The `label-studio` executable; ServerError naming the setup script when it is missing."""
    venv = venv or labelstudio_venv()
    executable = venv / "bin" / "label-studio"
    if not executable.exists():
        raise ServerError(f"Label Studio is not installed ({executable} is missing): {SETUP_HINT}")
    marker = template_data_dir(venv) / _TEMPLATE_MARKER
    expected = f"label-studio {LABEL_STUDIO_VERSION}"
    if not marker.exists() or marker.read_text().strip() != expected:
        raise ServerError(f"the migrated template data dir {marker.parent} is missing or not for "
                          f"{expected}: {SETUP_HINT}")
    return executable


def prepare_data_dir(data_dir: str | os.PathLike, venv: Path | None = None) -> Path:
    """Make `data_dir` usable: a copy of the migrated template unless it already holds a database."""
    data_dir = Path(data_dir).resolve()
    if (data_dir / _DATABASE).exists():
        return data_dir
    template = template_data_dir(venv)
    data_dir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(template, data_dir, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(_TEMPLATE_MARKER, ".env"))
    return data_dir


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _server_env(data_dir: Path, username: str, password: str, token: str) -> dict[str, str]:
    env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    env.update({
        "LANG": env.get("LANG", "C.UTF-8"),
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        "LABEL_STUDIO_USERNAME": username,
        "LABEL_STUDIO_PASSWORD": password,
        "LABEL_STUDIO_USER_TOKEN": token,
        "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",
        "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
        "LABEL_STUDIO_SENTRY_DSN": "",
        "LABEL_STUDIO_FRONTEND_SENTRY_DSN": "",
        "PYTHONUNBUFFERED": "1",
    })
    return env


def _log_tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start_server(data_dir: str | os.PathLike, port: int, username: str, password: str, token: str, *,
                 venv: Path | None = None, timeout: float = 180.0) -> ServerHandle:
    """Start Label Studio on 127.0.0.1:`port` with `data_dir` (created from the template when new)
    and wait until it answers. The admin `username`/`password` and API `token` are created on first
    start. Returns once healthy; ServerError (with the log's tail) when it does not come up."""
    if len(token) < 6:
        raise ServerError("the API token must be at least 6 characters (Label Studio ignores shorter ones)")
    executable = check_installation(venv)
    if _port_in_use(port):
        raise ServerError(f"port {port} on 127.0.0.1 is already in use: stop what runs there "
                          f"(`safeforge review server status`) or choose another port")
    data_dir = prepare_data_dir(data_dir, venv)
    log_path = data_dir / _LOG_FILE
    with open(log_path, "ab") as log:
        log.write(f"\n=== starting Label Studio on port {port} at {time.ctime()} ===\n".encode())
        log.flush()
        offset = log.tell()
        process = subprocess.Popen(
            [str(executable), "start", "--data-dir", str(data_dir), "--no-browser",
             "--internal-host", "127.0.0.1", "--port", str(port), "--enable-legacy-api-token"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=data_dir,
            env=_server_env(data_dir, username, password, token), start_new_session=True)
    _OWN_CHILDREN[process.pid] = process
    handle = ServerHandle(pid=process.pid, url=f"http://127.0.0.1:{port}", port=port, data_dir=str(data_dir),
                          log_path=str(log_path), started_at=time.time(),
                          create_time=psutil.Process(process.pid).create_time())
    try:
        _wait_until_up(process, handle, offset, timeout)
    except BaseException:
        _terminate(handle, _OWN_CHILDREN.pop(process.pid))
        raise
    (data_dir / _HANDLE_FILE).write_text(json.dumps(asdict(handle), indent=2) + "\n")
    return handle


def _wait_until_up(process: subprocess.Popen, handle: ServerHandle, log_offset: int, timeout: float) -> None:
    log_path = Path(handle.log_path)
    deadline = time.monotonic() + timeout
    listening = False
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerError(f"Label Studio exited with code {process.returncode} while starting; "
                              f"log {log_path}:\n{_log_tail(log_path)}")
        if not listening:
            with open(log_path, "rb") as log:
                log.seek(log_offset)
                match = _LISTENING.search(log.read().decode(errors="replace"))
            if match and int(match.group(1)) != handle.port:
                raise ServerError(f"port {handle.port} was taken while Label Studio started (it moved to "
                                  f"{match.group(1)}): choose another port")
            listening = match is not None
        if listening:
            try:
                if httpx.get(f"{handle.url}/health", timeout=2, trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
        time.sleep(0.25)
    raise ServerError(f"Label Studio did not answer on {handle.url} within {timeout:.0f} s; "
                      f"log {log_path}:\n{_log_tail(log_path)}")


def _terminate(handle: ServerHandle, process: subprocess.Popen | None = None, timeout: float = 15.0) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left; reap our own child and wait until
    the port is closed (a process whose main thread is gone may still be shutting down its others)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(handle.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + (timeout if sig == signal.SIGTERM else 5.0)
        while time.monotonic() < deadline and _group_alive(handle.pid):
            if process is not None:
                process.poll()  # reap our own child, so that it does not linger as a zombie
            time.sleep(0.1)
        if not _group_alive(handle.pid):
            break
    if process is not None:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    deadline = time.monotonic() + 5.0
    while _port_in_use(handle.port) and time.monotonic() < deadline:
        time.sleep(0.1)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    for process in psutil.process_iter(["status"]):
        try:
            if os.getpgid(process.pid) == pgid and process.info["status"] != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, psutil.Error):
            continue
    return False


def stop_server(handle: ServerHandle, timeout: float = 15.0) -> None:
    """Stop the server and every process of its group; a server already gone is fine."""
    child = _OWN_CHILDREN.pop(handle.pid, None)
    if handle.is_running() or child is not None:
        _terminate(handle, child, timeout)
    handle_file = Path(handle.data_dir) / _HANDLE_FILE
    try:
        if json.loads(handle_file.read_text()).get("pid") == handle.pid:
            handle_file.unlink()
    except (OSError, ValueError):
        pass


def running_server(data_dir: str | os.PathLike) -> ServerHandle | None:
    """The server started on `data_dir` (by this or another process), if it still runs."""
    try:
        handle = ServerHandle(**json.loads((Path(data_dir).resolve() / _HANDLE_FILE).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    return handle if handle.is_running() else None

