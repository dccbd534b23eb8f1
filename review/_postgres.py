"""A local PostgreSQL server for Label Studio, from the system's packages (Debian's `postgresql`, which
scripts/setup.sh installs): a team's review server, where several annotators write at once.

One database cluster per Label Studio data dir (`<data dir>/postgresql/`), reached over a Unix socket
only (no TCP port), in a folder only the server's user may enter (mode 0700): that folder, not a
password, keeps other users out. It starts before Label Studio and stops after it; the data stays
in the cluster between restarts. A new cluster is a copy of a template whose Label Studio database
is migrated already (`<Label Studio venv>/template-postgresql/`, made by scripts/setup_labelstudio.sh,
or on first use in about a minute), so the server starts in seconds.

PostgreSQL refuses to run as root: when Safeforge runs as root, the server runs as the `postgres` user
the package creates, owns the cluster, and needs to be able to enter the data dir's folders.
Label Studio's side (its executable, its version) is handed in by `_server`, which this module never imports.
"""

from __future__ import annotations

import glob
import hashlib
import os
import pwd
import re
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from safeforge.common.processes import ProcessRecord, spawn, stop, wait_ready
from safeforge.review._errors import ServerError

CLUSTER_DIR = "postgresql"
TEMPLATE_DIR = "template-postgresql"
_RECORD_FILE = "postgresql.json"
_LOG_FILE = "postgresql.log"
_MARKER = ".safeforge-template"
ROLE = DATABASE = "labelstudio"
PORT = 5432  # names the socket file only: nothing listens on TCP
USER_WHEN_ROOT = "postgres"
INSTALL_HINT = "install PostgreSQL (scripts/setup.sh does: apt-get install postgresql)"
_SOCKET_PATH_LIMIT = 100  # a Unix socket's path must fit in 107 bytes


def bin_dir() -> Path:
    """The folder of PostgreSQL's server programs (Debian keeps them in /usr/lib/postgresql/<version>/bin)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("postgres")
    if on_path and (Path(on_path).parent / "initdb").exists():
        return Path(on_path).parent
    raise ServerError(f"PostgreSQL is not installed (no postgres and initdb programs found): {INSTALL_HINT}")


def server_user() -> str | None:
    """The user PostgreSQL runs as: this process's own, or `postgres` when this process is root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(USER_WHEN_ROOT)
    except KeyError:
        raise ServerError(f"PostgreSQL cannot run as root and there is no {USER_WHEN_ROOT!r} user to run it as: {INSTALL_HINT}") from None
    return USER_WHEN_ROOT


@dataclass(frozen=True)
class Cluster:
    """The PostgreSQL cluster of one Label Studio data dir."""

    data_dir: Path

    @property
    def path(self) -> Path:
        return self.data_dir / CLUSTER_DIR

    @property
    def socket_dir(self) -> Path:
        near = self.data_dir / "postgresql-socket"
        if len(str(near / f".s.PGSQL.{PORT}")) <= _SOCKET_PATH_LIMIT:
            return near
        digest = hashlib.sha256(str(self.data_dir).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"safeforge-pg-{digest}"

    @property
    def log(self) -> Path:
        return self.data_dir / _LOG_FILE

    def exists(self) -> bool:
        return (self.path / "PG_VERSION").exists()

    def label_studio_env(self) -> dict[str, str]:
        """What Label Studio needs to use this cluster (no secret: the socket folder guards it)."""
        return {
            "DJANGO_DB": "default",
            "POSTGRE_HOST": str(self.socket_dir),
            "POSTGRE_PORT": str(PORT),
            "POSTGRE_NAME": DATABASE,
            "POSTGRE_USER": ROLE,
            "POSTGRE_PASSWORD": "",
        }

    def running(self) -> ProcessRecord | None:
        record = ProcessRecord.load(self.data_dir / _RECORD_FILE)
        return record if record is not None and record.is_running() else None


def make_cluster(data_dir: Path, template: Path) -> Cluster:
    """The data dir's new cluster: a copy of the migrated `template`."""
    cluster = Cluster(data_dir)
    user = server_user()
    _check_reachable(data_dir, user)
    shutil.copytree(template, cluster.path, symlinks=True, ignore=shutil.ignore_patterns(_MARKER))
    _own(cluster.path, user)
    cluster.path.chmod(0o700)
    return cluster


def template_ready(venv: Path, made_for: str) -> bool:
    """Whether the template is there, made for this Label Studio (`made_for`: "label-studio 1.23.2")
    and this PostgreSQL's major version."""
    template = venv / TEMPLATE_DIR
    marker, version = template / _MARKER, template / "PG_VERSION"
    return (
        marker.exists() and marker.read_text().strip() == made_for and version.exists() and version.read_text().strip() == major_version()
    )


def major_version() -> str:
    """The installed PostgreSQL's major version ("15"), as a cluster's PG_VERSION file holds it."""
    done = subprocess.run([str(bin_dir() / "postgres"), "-V"], capture_output=True, text=True, check=False)
    found = re.search(r"(\d+)(?:\.\d+)*", done.stdout)
    return found.group(1) if found else ""


def start_postgres(cluster: Cluster, timeout: float = 60.0) -> ProcessRecord:
    """Start the cluster's server (or reuse the running one) and wait until it accepts connections."""
    running = cluster.running()
    if running is not None:
        return running
    user = server_user()
    _check_reachable(cluster.data_dir, user)
    socket_dir = cluster.socket_dir
    socket_dir.mkdir(parents=True, exist_ok=True)
    _own(socket_dir, user)
    expected_owner = pwd.getpwnam(user).pw_uid if user else os.geteuid()
    if socket_dir.stat().st_uid != expected_owner:
        raise ServerError(f"{socket_dir} belongs to another user: remove it, then start again")
    socket_dir.chmod(0o700)
    binaries = bin_dir()
    record = spawn(
        "postgresql",
        [str(binaries / "postgres"), "-D", str(cluster.path), "-k", str(socket_dir), "-p", str(PORT), "-c", "listen_addresses="],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
        log=cluster.log,
        url=f"postgresql://{socket_dir}",
        user=user,
    )
    wait_ready(record, lambda: _accepting(binaries, socket_dir), timeout, ServerError)
    record.save(cluster.data_dir / _RECORD_FILE)
    return record


def stop_postgres(cluster: Cluster, timeout: float = 30.0) -> None:
    """Stop the cluster's server, if it runs (its data stays)."""
    record = ProcessRecord.load(cluster.data_dir / _RECORD_FILE)
    if record is None:
        return
    left = stop(record, timeout)
    if left:
        raise ServerError(f"PostgreSQL processes {left} survived SIGKILL")
    (cluster.data_dir / _RECORD_FILE).unlink(missing_ok=True)


def _accepting(binaries: Path, socket_dir: Path) -> bool:
    done = subprocess.run(
        [str(binaries / "pg_isready"), "-q", "-h", str(socket_dir), "-p", str(PORT), "-d", "postgres", "-U", ROLE],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode == 0


def make_template(venv: Path, label_studio: Path, made_for: str, progress=print) -> Path:
    """Make `<venv>/template-postgresql/`: a cluster whose database the `label_studio` executable
    migrated, marked as `made_for` that Label Studio ("label-studio 1.23.2")."""
    user = server_user()
    binaries = bin_dir()
    progress(f"making the PostgreSQL template for {made_for} (about a minute)")
    work = Path(tempfile.mkdtemp(prefix="safeforge-pg-template-"))
    try:
        work.chmod(0o711)  # the server's user enters it when it is not this one
        cluster = Cluster(work / "data")
        cluster.data_dir.mkdir()
        cluster.path.mkdir(mode=0o700)
        _own(cluster.path, user)
        initdb = [str(binaries / "initdb"), "-D", str(cluster.path), "-U", ROLE, "--auth=trust", "-E", "UTF8", "--locale=C"]
        _run(initdb, user, cluster.log)
        record = start_postgres(cluster)
        try:
            _run([str(binaries / "createdb"), "-h", str(cluster.socket_dir), "-p", str(PORT), "-U", ROLE, DATABASE], None, cluster.log)
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": os.environ.get("HOME", "/tmp"),
                "LANG": "C.UTF-8",
                "LABEL_STUDIO_BASE_DATA_DIR": str(cluster.data_dir),
                "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",
                "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
                "LABEL_STUDIO_SENTRY_DSN": "",
                "LABEL_STUDIO_FRONTEND_SENTRY_DSN": "",
                **cluster.label_studio_env(),
            }
            _run([str(label_studio), "version", "--data-dir", str(cluster.data_dir)], None, cluster.log, env)  # migrates
        finally:
            stop(record)
        (cluster.path / _MARKER).write_text(f"{made_for}\n")
        target = venv / TEMPLATE_DIR
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(cluster.path, target, symlinks=True, ignore=shutil.ignore_patterns("postmaster.pid", "postmaster.opts"))
        (target / _MARKER).write_text(f"{made_for}\n")
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(command: list[str], user: str | None, log: Path, env: dict[str, str] | None = None) -> None:
    with open(log, "ab") as out:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            user=user,
            group=pwd.getpwnam(user).pw_gid if user else None,
            extra_groups=[] if user else None,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
        raise ServerError(f"{Path(command[0]).name} failed (exit {done.returncode}); the end of {log}:\n{tail}")


def _own(path: Path, user: str | None) -> None:
    """Give `path` (and what it holds) to the server's user when that is not this process's."""
    if user is None:
        return
    entry = pwd.getpwnam(user)
    for folder, dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.lchown(name, entry.pw_uid, entry.pw_gid)


def _check_reachable(data_dir: Path, user: str | None) -> None:
    """ServerError naming the folder the server's user cannot enter on the way to `data_dir`."""
    if user is None:
        return
    entry = pwd.getpwnam(user)
    groups = {entry.pw_gid}
    for folder in [*reversed(Path(data_dir).resolve().parents), Path(data_dir).resolve()]:
        if not folder.exists():
            break
        info = folder.stat()
        mode = info.st_mode
        may_enter = (
            (info.st_uid == entry.pw_uid and mode & stat.S_IXUSR) or (info.st_gid in groups and mode & stat.S_IXGRP) or mode & stat.S_IXOTH
        )
        if not may_enter:
            raise ServerError(
                f"PostgreSQL runs as user {user!r} (it refuses root), which cannot enter {folder} (mode {stat.filemode(mode)}); "
                f"choose a data dir it can reach (SAFEFORGE_LABELSTUDIO_DATA, or --data-dir), or run Safeforge as another user"
            )
