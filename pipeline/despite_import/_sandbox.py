"""Running one DESPITE code.py in an isolated child process (the child side is `_bootstrap`).

Layers, outermost first (`ChildResult.layers` says which were really active):
- code.py is read by the parent only when it is a regular file with one name (not a symlink, hard
  link, FIFO or device) within the `code_bytes` input limit, and handed to the child on its stdin;
- a minimal environment built from an allow-list (nothing of ours is passed on);
- the child dies with its parent: a parent-death signal on the launcher of `unshare`, whose
  `--kill-child` takes the child (the pid namespace's init, so everything in it) along;
- resource limits, set by the child on itself before anything else: address space, CPU time,
  size of any written file, open files, processes, no core dumps;
- a wall-clock limit, after which the child's process group is killed;
- Linux namespaces via util-linux `unshare` (plain as root, else in a user namespace): no network
  (only a loopback that is down), its own pid namespace (host processes invisible; everything it
  started dies with it), its own mount namespace in which the child builds a private root on a tmpfs
  — the Python installation read-only, the task folder (code.py) read-only, a private writable,
  non-executable directory, nothing else — chroots into it, becomes an unprivileged user where it
  can and drops every capability. The tmpfs disappears with the namespace: nothing is left behind;
- a process filter (seccomp): starting a process or running a program, by any route, kills the
  child, and the import is reported as blocked;
- the child's audit hook (a Python-level tripwire for sockets, processes, ctypes and file access).

The child's output is hostile data: it is read with a size cap, its result is schema-checked and
its PDDL size-capped here, and parsed by the importer under the bounds of the task reader.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from safeforge.common.files import FileRefused, read_regular_file
from safeforge.common.limits import beyond, current_limits
from safeforge.common.ranges import MEMORY_MB, SECONDS

BOOTSTRAP = Path(__file__).with_name("_bootstrap.py")
STANDIN = Path(__file__).with_name("standin")
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the `safeforge` package the child imports (its folder)
_SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
_STDERR_TAIL = 2000
PRIVATE_WORKDIR = "/safeforge-work"  # inside the child's private root
PRIVATE_TASK = "/safeforge-task"
UNPRIVILEGED_UID = 65534  # nobody
# Runs `unshare` (or the child) with a parent-death signal, so it dies when the importer does.
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n"
    "os.getppid() == int(sys.argv[1]) or os._exit(1)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


@dataclass(frozen=True)
class Limits:
    """Limits on one child."""

    seconds: float = 60.0  # wall clock, Python start-up included
    memory_mb: int = 2048  # address space
    output_mb: int = 64  # largest file the child may write, its result included
    open_files: int = 256
    processes: int = 32  # processes and threads of the child's (unprivileged) user
    audit_hook: bool = True  # off only to test the OS layers on their own
    process_filter: bool = True  # off only to test the other layers on their own

    def __post_init__(self) -> None:
        """A cap that is not in its range would remove the cap (RLIMIT_AS=-5 MiB is no limit at all)."""
        SECONDS.check(self.seconds, "the time limit of one code.py")
        MEMORY_MB.check(self.memory_mb, "the memory cap of one code.py (MiB)")


@dataclass
class ChildResult:
    """What a child produced, or why it produced nothing."""

    status: str  # ok | error | blocked | timeout | memory | killed | crashed
    message: str = ""
    domain: str = ""
    problem: str = ""
    warnings: list[str] = field(default_factory=list)
    traceback: str = ""  # code.py's frames, when it raised
    layers: dict[str, str] = field(default_factory=dict)
    stderr: str = ""  # the end of what the child printed
    seconds: float = 0.0
    code_sha256: str = ""  # of the code.py that was run

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _environment(workdir: str | Path) -> dict[str, str]:
    """Everything the child gets: fixed values, nothing copied from our environment."""
    home = str(workdir)
    return {
        "PATH": _SYSTEM_PATH,
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


@functools.cache
def namespace_command() -> tuple[str, ...]:
    """The `unshare` prefix that works here (empty when no namespaces can be created)."""
    unshare = shutil.which("unshare", path=_SYSTEM_PATH)
    if unshare is None:
        return ()
    flags = ("--net", "--pid", "--fork", "--mount-proc", "--kill-child")
    for variant in ((unshare, *flags), (unshare, "--user", "--map-root-user", *flags)):
        try:
            probe = subprocess.run([*variant, "true"], capture_output=True, timeout=10, env={"PATH": _SYSTEM_PATH})
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return variant
    return ()


def _host_namespaces() -> dict[str, str]:
    return {kind: os.readlink(f"/proc/self/ns/{kind}") for kind in ("net", "mnt", "pid")}


def _rlimits(limits: Limits, unprivileged: bool) -> dict[str, int]:
    """The resource limits the child sets on itself first thing (so no preexec_fn is needed). The
    process limit counts every process of the child's user: `nobody` when the child can switch to it
    (root is exempt from the limit), else our own user, whose processes are counted here."""
    processes = limits.processes if unprivileged else _own_processes() + limits.processes
    return {
        "RLIMIT_AS": limits.memory_mb << 20,
        "RLIMIT_CPU": math.ceil(limits.seconds) + 1,
        "RLIMIT_FSIZE": limits.output_mb << 20,
        "RLIMIT_NOFILE": limits.open_files,
        "RLIMIT_NPROC": processes,
        "RLIMIT_CORE": 0,
    }


def _own_processes() -> int:
    uid, count = os.getuid(), 0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                count += len(list((entry / "task").iterdir()))
        except OSError:
            continue
    return count


class CodeRefused(Exception):
    """code.py cannot be read safely (the message never quotes its content)."""


def read_code(path: Path) -> bytes:
    """code.py's bytes, only from a regular file with one name within the `code_bytes` limit."""
    try:
        return read_regular_file(path, "code_bytes", one_name=True)
    except FileRefused as exc:
        raise CodeRefused(f"{path.name} {exc.reason}") from None


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _collect(process: subprocess.Popen, limits: Limits) -> tuple[bytes, str, bool]:
    """The child's stdout (at most output_mb), the end of its stderr, and whether the wall-clock
    limit passed; reads both pipes as they fill so that neither blocks the child."""
    cap, deadline = limits.output_mb << 20, time.monotonic() + limits.seconds
    out, err = bytearray(), bytearray()
    assert process.stdout is not None and process.stderr is not None  # both are pipes
    streams = {process.stdout.fileno(): out, process.stderr.fileno(): err}
    while streams:
        left = deadline - time.monotonic()
        if left <= 0:
            return bytes(out[:cap]), err[-_STDERR_TAIL:].decode("utf-8", "replace"), True
        ready, _, _ = select.select(list(streams), [], [], left)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                del streams[fd]
                continue
            buffer = streams[fd]
            buffer += chunk
            if buffer is err and len(err) > 4 * _STDERR_TAIL:
                del err[:-_STDERR_TAIL]
            if buffer is out and len(out) > cap:
                del streams[fd]  # the rest is not read: more than a result needs
    return bytes(out[:cap]), err[-_STDERR_TAIL:].decode("utf-8", "replace"), False


def _records(text: str) -> tuple[dict, dict | None]:
    """The layers record and the result record the child wrote (either may be missing)."""
    layers: dict = {}
    result: dict | None = None
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if not layers and isinstance(record.get("layers"), dict):
            layers = {str(k): str(v) for k, v in record["layers"].items()}
        elif result is None and isinstance(record.get("status"), str):
            result = record
    return layers, result


def _signal_of(returncode: int) -> int | None:
    if returncode < 0:
        return -returncode
    if returncode > 128:  # a shell-style report of a signal, as `unshare` may give
        return returncode - 128
    return None


DEFAULT_LIMITS = Limits()


def run_code(code_path: Path, problem_name: str, limits: Limits = DEFAULT_LIMITS) -> ChildResult:
    """Run `code_path` in an isolated child and return the problem it builds (as PDDL)."""
    started = time.monotonic()
    try:
        code = read_code(Path(code_path))
    except CodeRefused as exc:
        return ChildResult("refused", str(exc))
    prefix = namespace_command()
    unprivileged = bool(prefix) and os.getuid() == 0
    with contextlib.ExitStack() as stack:
        if prefix:  # the child makes its own private root; nothing of it lives here
            workdir, code_file = PRIVATE_WORKDIR, f"{PRIVATE_TASK}/code.py"
        else:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="safeforge-despite-")))
            (scratch / "task").mkdir(mode=0o700)
            (scratch / "task" / "code.py").write_bytes(code)
            workdir = code_file = str(scratch / "task")
            code_file += "/code.py"
        request = {
            "code": code_file,
            "code_text": code.decode("utf-8", "replace"),
            "workdir": workdir,
            "standin": str(STANDIN),
            "package_dir": str(PACKAGE_DIR),
            "problem_name": problem_name,
            "audit_hook": limits.audit_hook,
            "process_filter": limits.process_filter,
            "rlimits": _rlimits(limits, unprivileged),
            "namespaces": bool(prefix),
            "unprivileged_uid": UNPRIVILEGED_UID if unprivileged else None,
            "host_namespaces": _host_namespaces(),
        }
        command = [
            sys.executable,
            "-I",
            "-c",
            _LAUNCHER,
            str(os.getpid()),
            *(prefix or (sys.executable,)),
            *((sys.executable,) if prefix else ()),
            "-I",
            "-B",
            str(BOOTSTRAP),
        ]
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd="/" if prefix else workdir,
            env=_environment(workdir),
            start_new_session=True,
            close_fds=True,
        )
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        try:
            try:
                process.stdin.write(json.dumps(request).encode())
                process.stdin.close()
            except BrokenPipeError:
                pass
            out, stderr, timed_out = _collect(process, limits)
        finally:
            _kill_group(process.pid)
            process.wait()
            process.stdout.close()
            process.stderr.close()
    layers, record = _records(out.decode("utf-8", "replace"))
    result = _interpret(record, timed_out, process.returncode, limits)
    result.layers = {**_parent_layers(limits, prefix), **layers}
    result.stderr, result.seconds = stderr, time.monotonic() - started
    result.code_sha256 = hashlib.sha256(code).hexdigest()
    return result


def _parent_layers(limits: Limits, prefix: tuple[str, ...]) -> dict[str, str]:
    layers = {
        "minimal environment": "active: PATH, HOME, TMPDIR, locale and thread counts only",
        "private directory": "active: a fresh directory as cwd, HOME and TMPDIR",
        "dies with the importer": "active: parent-death signal, then the pid namespace's end",
        "resource limits": "requested (the child did not confirm them)",
        "time limit": f"active: killed after {limits.seconds:g}s",
    }
    if prefix:
        for name in ("network namespace", "pid namespace", "mount namespace", "private root"):
            layers[name] = "requested (the child did not confirm it)"
    else:
        layers["namespaces"] = "unavailable: `unshare` is missing or not permitted here"
    return layers


def _interpret(record: dict | None, timed_out: bool, returncode: int, limits: Limits) -> ChildResult:
    if timed_out:
        return ChildResult("timeout", f"stopped after the time limit of {limits.seconds:g}s")
    if record is not None:
        status = record["status"] if record["status"] in ("ok", "error", "blocked", "memory") else "crashed"
        domain, problem = record.get("domain"), record.get("problem")
        if status == "ok" and not (isinstance(domain, str) and isinstance(problem, str)):
            return ChildResult("crashed", "the child's result has no domain and problem text")
        domain, problem = str(domain or ""), str(problem or "")
        size = max(len(domain.encode()), len(problem.encode()))
        if status == "ok" and size > current_limits().pddl_bytes:
            return ChildResult("error", beyond("pddl_bytes", f"the PDDL it built is {size:,} bytes"))
        warnings = record.get("warnings")
        return ChildResult(
            status,
            str(record.get("message", ""))[:2000],
            domain or "",
            problem or "",
            [str(w)[:500] for w in warnings[:50]] if isinstance(warnings, list) else [],
            str(record.get("traceback", ""))[:4000],
        )
    number = _signal_of(returncode)
    if number == signal.SIGSYS:
        return ChildResult("blocked", "it started a process or ran a program (stopped by the process filter)")
    if number == signal.SIGKILL:
        return ChildResult("killed", "killed by SIGKILL: CPU time or memory limit reached")
    if number == signal.SIGXCPU:
        return ChildResult("timeout", "stopped by the CPU time limit")
    if number == signal.SIGXFSZ:
        return ChildResult("killed", f"stopped by the file size limit of {limits.output_mb} MiB")
    if number is not None:
        return ChildResult("crashed", f"killed by signal {number}")
    return ChildResult("crashed", f"exited with code {returncode} without a result")
