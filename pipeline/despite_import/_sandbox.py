"""Running one DESPITE code.py in an isolated child process (the child side is `_bootstrap`).

Layers, outermost first (`ChildResult.layers` says which were really active):
- a minimal environment built from an allow-list (nothing of ours is passed on), a fresh private
  directory as cwd, HOME and TMPDIR, holding a copy of code.py;
- resource limits, set by the child on itself before anything else: address space, CPU time,
  size of any written file, open files, no core dumps;
- a wall-clock limit, after which the child's process group is killed;
- Linux namespaces via util-linux `unshare` (plain as root, else in a user namespace): no network
  (only a loopback that is down), its own pid namespace (host processes invisible; everything it
  started dies with it), its own mount namespace in which the child remounts all but its private
  directory read-only and then drops every capability;
- the child's audit hook (a Python-level tripwire for sockets, processes, ctypes and file access).
"""
from __future__ import annotations

import functools
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BOOTSTRAP = Path(__file__).with_name("_bootstrap.py")
STANDIN = Path(__file__).with_name("standin")
CODE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the `pipeline` package the child imports
_SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
_STDERR_TAIL = 2000


@dataclass(frozen=True)
class Limits:
    """Limits on one child."""

    seconds: float = 60.0  # wall clock, Python start-up included
    memory_mb: int = 2048  # address space
    output_mb: int = 64  # largest file the child may write, its result included
    open_files: int = 256
    audit_hook: bool = True  # off only to test the OS layers on their own


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

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _environment(workdir: Path) -> dict[str, str]:
    """Everything the child gets: fixed values, nothing copied from our environment."""
    home = str(workdir)
    return {"PATH": _SYSTEM_PATH, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@functools.cache
def namespace_command() -> tuple[str, ...]:
    """The `unshare` prefix that works here (empty when no namespaces can be created)."""
    unshare = shutil.which("unshare", path=_SYSTEM_PATH)
    if unshare is None:
        return ()
    flags = ("--net", "--pid", "--fork", "--mount-proc", "--kill-child")
    for variant in ((unshare, *flags), (unshare, "--user", "--map-root-user", *flags)):
        try:
            probe = subprocess.run([*variant, "true"], capture_output=True, timeout=10,
                                   env={"PATH": _SYSTEM_PATH})
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return variant
    return ()


def _host_namespaces() -> dict[str, str]:
    return {kind: os.readlink(f"/proc/self/ns/{kind}") for kind in ("net", "mnt", "pid")}


def _rlimits(limits: Limits) -> dict[str, int]:
    """The resource limits the child sets on itself first thing (so no preexec_fn is needed)."""
    return {"RLIMIT_AS": limits.memory_mb << 20, "RLIMIT_CPU": math.ceil(limits.seconds) + 1,
            "RLIMIT_FSIZE": limits.output_mb << 20, "RLIMIT_NOFILE": limits.open_files, "RLIMIT_CORE": 0}


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_head(path: Path, limit: int) -> str:
    with open(path, "rb") as handle:
        return handle.read(limit).decode("utf-8", "replace")


def _read_tail(path: Path) -> str:
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - _STDERR_TAIL))
        return handle.read().decode("utf-8", "replace")


def _records(text: str) -> tuple[dict, dict | None]:
    """The layers record and the result record the child wrote (either may be missing)."""
    layers, result = {}, None
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


def run_code(code_path: Path, problem_name: str, limits: Limits = Limits()) -> ChildResult:
    """Run `code_path` in an isolated child and return the problem it builds (as PDDL)."""
    started = time.monotonic()
    prefix = namespace_command()
    with tempfile.TemporaryDirectory(prefix="safeforge-despite-") as scratch:
        workdir = Path(scratch) / "task"
        workdir.mkdir(mode=0o700)
        shutil.copyfile(code_path, workdir / "code.py")
        request = {"code": str(workdir / "code.py"), "workdir": str(workdir), "standin": str(STANDIN), "code_root": str(CODE_ROOT),
                   "problem_name": problem_name, "audit_hook": limits.audit_hook,
                   "rlimits": _rlimits(limits), "namespaces": bool(prefix),
                   "host_namespaces": _host_namespaces()}
        command = [*prefix, sys.executable, "-I", "-B", str(BOOTSTRAP), json.dumps(request)]
        out_path, err_path = Path(scratch) / "result.jsonl", Path(scratch) / "stderr.txt"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=workdir,
                env=_environment(workdir), start_new_session=True, close_fds=True)
            try:
                process.wait(limits.seconds)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_group(process.pid)
                process.wait()
        layers, record = _records(_read_head(out_path, limits.output_mb << 20))
        stderr = _read_tail(err_path)
    result = _interpret(record, timed_out, process.returncode, limits)
    result.layers = {**_parent_layers(limits, prefix), **layers}
    result.stderr, result.seconds = stderr, time.monotonic() - started
    return result


def _parent_layers(limits: Limits, prefix: tuple[str, ...]) -> dict[str, str]:
    layers = {
        "minimal environment": "active: PATH, HOME, TMPDIR, locale and thread counts only",
        "private directory": "active: a fresh temporary directory as cwd, HOME and TMPDIR",
        "resource limits": "requested (the child did not confirm them)",
        "time limit": f"active: killed after {limits.seconds:g}s",
    }
    if prefix:
        for name in ("network namespace", "pid namespace", "mount namespace"):
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
        warnings = record.get("warnings")
        return ChildResult(status, str(record.get("message", ""))[:2000], domain or "", problem or "",
                           [str(w) for w in warnings] if isinstance(warnings, list) else [],
                           str(record.get("traceback", ""))[:4000])
    number = _signal_of(returncode)
    if number == signal.SIGKILL:
        return ChildResult("killed", "killed by SIGKILL: CPU time or memory limit reached")
    if number == signal.SIGXCPU:
        return ChildResult("timeout", "stopped by the CPU time limit")
    if number == signal.SIGXFSZ:
        return ChildResult("killed", f"stopped by the file size limit of {limits.output_mb} MiB")
    if number is not None:
        return ChildResult("crashed", f"killed by signal {number}")
    return ChildResult("crashed", f"exited with code {returncode} without a result")
