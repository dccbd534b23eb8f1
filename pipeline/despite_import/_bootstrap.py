"""The child side of an import: lock this process down, run one DESPITE code.py, report.

Run by `_sandbox` as `python -I -B _bootstrap.py`, with the request (JSON, code.py's text included)
on stdin. Steps:

0. Set its own resource limits.
1. Inside the namespaces `unshare` created (when it did): check them; build a private root on a
   tmpfs (the Python installation and Safeforge's `pipeline` package bound read-only, code.py in a
   read-only `/task`, a writable but not executable `/work`, the null/zero/urandom devices and this
   namespace's /proc) and chroot into it; become `nobody` where the request says so; drop every
   capability.
2. Import Unified Planning, our `BasePlanner` stand-in and the PDDL writer.
3. Install the process filter (seccomp): from here on, starting a process or running a program,
   by any route (a fresh copy of `_posixsubprocess` included), kills the child at once with
   SIGSYS, which the parent reports as "blocked"; threads stay possible.
4. Install the audit hook (a Python-level tripwire): sockets, processes, ctypes, signals, and
   file access outside the allowed places stop the child at once with status "blocked".
5. Run code.py (not as __main__), build `DomainPlanner().build_problem(...)`, write it as PDDL.

Two JSON lines go to the original stdout: {"layers": ...} once the child is locked down, then the
result {"status": ok|error|memory|blocked, ...}. code.py's own prints go to stderr.
Exit codes: 0 result written (the child then exits at once: no atexit handlers, no waiting for
threads code.py started), 3 blocked by the audit hook.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback

BLOCKED_EXIT = 3

_BLOCKED_EVENTS = (
    "socket.",
    "ctypes.",
    "subprocess.",
    "os.exec",
    "os.fork",
    "os.posix_spawn",
    "os.spawn",
    "os.system",
    "os.kill",
    "os.killpg",
    "signal.pthread_kill",
    "pty.",
    "gc.get_",
    "sqlite3.",
    "resource.setrlimit",
    "resource.prlimit",
    "_posixsubprocess.",
    "webbrowser.",
)
_WRITE_EVENTS = frozenset(
    {
        "os.mkdir",
        "os.rmdir",
        "os.remove",
        "os.rename",
        "os.link",
        "os.symlink",
        "os.chmod",
        "os.chown",
        "os.chflags",
        "os.truncate",
        "os.utime",
        "os.mkfifo",
        "os.mknod",
        "os.setxattr",
        "os.removexattr",
        "shutil.copyfile",
        "shutil.copymode",
        "shutil.copystat",
        "shutil.copytree",
        "shutil.chown",
        "shutil.make_archive",
        "shutil.rmtree",
        "shutil.unpack_archive",
    }
)
_LIST_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
_NATIVE_SUFFIXES = (".so", ".pyd", ".dylib")


def _emit(fd: int, record: dict) -> None:
    """One JSON line on the result descriptor."""
    os.write(fd, (json.dumps(record, ensure_ascii=True) + "\n").encode())


# -- OS layers (run before any task code, while this process still has its capabilities) -----


def _libc():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    return libc


def _call(result: int, what: str) -> None:
    import ctypes

    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC = 32, 4096, 16384
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_ST_TO_MS = (
    (os.ST_NOSUID, _MS_NOSUID),
    (os.ST_NODEV, _MS_NODEV),
    (os.ST_NOEXEC, _MS_NOEXEC),
    (os.ST_NOATIME, _MS_NOATIME),
    (os.ST_NODIRATIME, _MS_NODIRATIME),
    (os.ST_RELATIME, _MS_RELATIME),
)


def _remount_read_only(libc, point: str) -> None:
    flags = os.statvfs(point).f_flag
    keep = sum(ms for st, ms in _ST_TO_MS if flags & st)  # flags the kernel may have locked
    _call(libc.mount(None, os.fsencode(point), None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | keep, None), f"remount {point} read-only")


def _bind(libc, source: str, target: str, read_only: bool = True) -> None:
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "ab").close()
    _call(libc.mount(os.fsencode(source), os.fsencode(target), None, _MS_BIND | _MS_REC, None), f"bind {source}")
    if read_only:
        _remount_read_only(libc, target)


def _visible_paths(request: dict) -> list[str]:
    """What the child may see, read-only: the interpreter, its libraries, the `safeforge` package."""
    candidates = [
        sys.base_prefix,
        sys.base_exec_prefix,
        sys.prefix,
        sys.exec_prefix,
        *sys.path,
        request["package_dir"],
        "/usr",
        "/lib",
        "/lib64",
        "/lib32",
        "/libx32",
        "/etc/ld.so.cache",
        "/etc/localtime",
    ]
    real = sorted({os.path.realpath(c) for c in candidates if c and os.path.exists(c)})
    return [path for path in real if not any(path.startswith(other + os.sep) for other in real)]


_SCRATCH_MOUNTS = ("/tmp", "/mnt", "/media", "/srv", "/var/tmp", "/run", "/opt", "/home")


def _scratch_mount(visible: list[str]) -> str:
    """A directory to cover with the private root's tmpfs: one that holds none of the visible paths
    (a virtual environment under /tmp would otherwise be hidden before it is bound)."""
    for point in _SCRATCH_MOUNTS:
        real = os.path.realpath(point)
        if os.path.isdir(real) and not any(path == real or path.startswith(real + os.sep) for path in visible):
            return real
    raise OSError(f"no directory among {', '.join(_SCRATCH_MOUNTS)} is free of the interpreter's files")


def _private_root(libc, request: dict) -> str:
    """A new root holding only what building a problem needs, then chroot into it."""
    visible = _visible_paths(request)
    scratch = _scratch_mount(visible)
    _call(libc.mount(b"tmpfs", os.fsencode(scratch), b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, b"size=64m,mode=0755"), "tmpfs")
    root = scratch + "/root"
    os.mkdir(root, 0o755)
    for path in visible:
        _bind(libc, path, root + path)
    for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
        if os.path.islink("/" + name) and not os.path.lexists(root + "/" + name):
            os.symlink(os.readlink("/" + name), root + "/" + name)
    for device in ("null", "zero", "urandom"):
        _bind(libc, f"/dev/{device}", f"{root}/dev/{device}", read_only=False)
    _bind(libc, "/proc", root + "/proc")  # this pid namespace's own
    work, task = root + request["workdir"], root + os.path.dirname(request["code"])
    os.mkdir(work, 0o700)
    os.mkdir(task, 0o755)
    _call(libc.mount(b"tmpfs", os.fsencode(task), b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, b"size=2m,mode=0755"), "task tmpfs")
    with open(root + request["code"], "w", encoding="utf-8") as handle:
        handle.write(request["code_text"])
    _remount_read_only(libc, task)
    if request["unprivileged_uid"] is not None:
        os.chown(work, request["unprivileged_uid"], request["unprivileged_uid"])
    os.chroot(root)
    os.chdir(request["workdir"])
    return (
        "active: only the Python installation and Safeforge's pipeline package (read-only), the task "
        "folder (read-only) and a private directory (writable, not executable)"
    )


def _drop_capabilities(libc, uid: int | None) -> str:
    """No capabilities now or after any exec: mounts and namespaces can no longer be undone. With
    `uid`, become that unprivileged user first (so the process limit applies and no file of root's is
    readable)."""
    import ctypes

    pr_set_pdeathsig, pr_capbset_drop, pr_set_securebits, pr_set_no_new_privs = 1, 24, 28, 38
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as handle:
        last = int(handle.read())
    secure = 0b11101111  # NOROOT, NO_SETUID_FIXUP, KEEP_CAPS, NO_CAP_AMBIENT_RAISE, all locked
    _call(libc.prctl(pr_set_securebits, secure, 0, 0, 0), "securebits")
    for cap in range(last + 1):
        _call(libc.prctl(pr_capbset_drop, cap, 0, 0, 0), f"drop capability {cap}")
    _call(libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0), "no_new_privs")
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        # a change of credentials clears the parent-death signal `unshare --kill-child` set: set it again
        _call(libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0), "parent-death signal")
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    _call(libc.capset(header, data), "capset")
    with open("/proc/self/status", encoding="ascii") as handle:
        effective = next(line.split()[1] for line in handle if line.startswith("CapEff:"))
    if int(effective, 16):
        return f"partial: effective capabilities {effective}"
    return "active: no capabilities, no new privileges"


def _os_layers(request: dict) -> dict[str, str]:
    layers = {}
    host = request["host_namespaces"]
    for kind, label in (("net", "network namespace"), ("mnt", "mount namespace"), ("pid", "pid namespace")):
        mine = os.readlink(f"/proc/self/ns/{kind}")
        layers[label] = "inactive: same as the importer's" if mine == host.get(kind) else "active"
    if layers["mount namespace"] == "active":
        layers["mount namespace"] = "active: a private copy of the mounts"
    if layers["network namespace"] == "active":
        import socket

        names = [name for _, name in socket.if_nameindex()]
        layers["network namespace"] = f"active: interfaces {', '.join(names) or 'none'} (loopback down)"
    if layers["pid namespace"] == "active":
        layers["pid namespace"] = "active: host processes invisible, all killed with this one"
    libc = _libc()
    try:
        layers["private root"] = _private_root(libc, request)
        uid = request["unprivileged_uid"]
    except OSError as exc:
        layers["private root"] = f"inactive: {exc}"
        uid = None  # outside a private root, another user could not read the interpreter's files
    try:
        layers["capabilities dropped"] = _drop_capabilities(libc, uid)
    except OSError as exc:
        layers["capabilities dropped"] = f"inactive: {exc}"
    uid = os.getuid()
    layers["unprivileged user"] = (
        f"active: uid {uid}" if uid == request["unprivileged_uid"] else f"unavailable: runs as uid {uid} (the importer's own user)"
    )
    return layers


# -- the audit hook ------------------------------------------------------------------------------


def _install_audit_hook(workdir: str, read_roots: tuple[str, ...], result_fd: int) -> None:
    """Stop the child on any event that building a problem does not need.

    A tripwire, not a boundary (native code can bypass it; that is what the OS layers are for),
    but hardened against simple tampering: everything it uses is bound here, none of it is
    reachable from task code, and a blocked operation also fails with PermissionError.
    """
    blocked_events, write_events, list_events = _BLOCKED_EVENTS, _WRITE_EVENTS, _LIST_EVENTS
    write_flags, devices, native = _WRITE_FLAGS, _DEVICES, _NATIVE_SUFFIXES
    realpath, fsdecode, isabs, sep = os.path.realpath, os.fsdecode, os.path.isabs, os.sep
    path_types, write, exit_now, dumps = (str, bytes, os.PathLike), os.write, os._exit, json.dumps
    any_, all_, isinstance_, repr_, bool_ = any, all, isinstance, repr, bool

    def inside(path, roots) -> bool:
        real = realpath(fsdecode(path))
        return real in devices or any_(real == r or real.startswith(r + sep) for r in roots)

    def violation(event: str, args: tuple):
        if event.startswith(blocked_events):
            return "not allowed"
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            if not isinstance_(path, path_types):
                return None  # an already open descriptor
            if mode is None and not isabs(fsdecode(path)):
                return "relative path in os.open (its dir_fd cannot be checked)"
            writing = (mode is not None and any_(c in mode for c in "wax+")) or bool_((flags or 0) & write_flags)
            if writing and (not inside(path, (workdir,)) or fsdecode(path).endswith(native)):
                return "writing outside the private directory"
            if not inside(path, read_roots):
                return "reading outside the allowed directories"
        elif event in write_events:
            paths = [a for a in args if isinstance_(a, path_types)]
            if event.startswith("os.") and not all_(isabs(fsdecode(p)) for p in paths):
                return "relative path (its dir_fd cannot be checked)"
            if not all_(inside(p, (workdir,)) for p in paths):
                return "changing files outside the private directory"
        elif event in list_events and args and isinstance_(args[0], path_types) and not inside(args[0], read_roots):
            return "listing a directory outside the allowed ones"
        return None

    def hook(event: str, args: tuple) -> None:
        reason = violation(event, args)
        if reason is None:
            return
        message = f"{event} {repr_(args)[:300]}: {reason}"
        write(result_fd, (dumps({"status": "blocked", "message": message}, ensure_ascii=True) + "\n").encode())
        exit_now(BLOCKED_EXIT)
        raise PermissionError(f"blocked by the import sandbox: {message}")

    sys.addaudithook(hook)


# -- the process filter (seccomp) ------------------------------------------------------------------

# (audit architecture, clone, clone3, system calls that start a process or run a program)
_SYSCALLS = {
    "x86_64": (0xC000003E, 56, 435, (57, 58, 59, 322)),  # fork, vfork, execve, execveat
    "aarch64": (0xC00000B7, 220, 435, (221, 281)),  # execve, execveat
}
_CLONE_THREAD = 0x00010000
_X32_BIT = 0x40000000
_RET_KILL_PROCESS, _RET_ALLOW, _RET_ENOSYS = 0x80000000, 0x7FFF0000, 0x00050000 | 38
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06


def _filter_program(machine: str) -> list[tuple[int, int, int, int]]:
    """The classic-BPF program: any other architecture, x32 calls, fork, vfork, execve, execveat
    and clone without CLONE_THREAD kill the process; clone3 (whose flags a filter cannot read)
    answers ENOSYS, so that threads are made with clone; everything else is allowed."""
    arch, clone, clone3, starts = _SYSCALLS[machine]
    kill, allow, enosys = "kill", "allow", "enosys"
    program: list[tuple | str] = [  # instructions (code, jump if true, jump if false, k) and labels
        (_LD_ABS, 0, 0, 4),  # the architecture
        (_JEQ, 0, kill, arch),
        (_LD_ABS, 0, 0, 0),  # the system call's number
        (_JGE, kill, 0, _X32_BIT),
        (_JEQ, enosys, 0, clone3),
        (_JEQ, 0, "not clone", clone),
        (_LD_ABS, 0, 0, 16),  # clone's flags (the low half of its first argument)
        (_JSET, allow, kill, _CLONE_THREAD),
        "not clone",
        *((_JEQ, kill, 0, number) for number in starts),
        allow,
        (_RET, 0, 0, _RET_ALLOW),
        kill,
        (_RET, 0, 0, _RET_KILL_PROCESS),
        enosys,
        (_RET, 0, 0, _RET_ENOSYS),
    ]
    labels: dict[str, int] = {}
    at = 0
    for item in program:
        if isinstance(item, str):
            labels[item] = at
        else:
            at += 1
    code: list[tuple[int, int, int, int]] = []
    for item in program:
        if not isinstance(item, str):
            op, true, false, k = item
            jumps = [labels[t] - len(code) - 1 if isinstance(t, str) else t for t in (true, false)]
            code.append((op, jumps[0], jumps[1], k))
    return code


def _install_process_filter() -> str:
    """From now on, a process start or program run kills this process (see `_filter_program`)."""
    import ctypes
    import platform

    machine = platform.machine()
    if machine not in _SYSCALLS:
        return f"unavailable: no filter for {machine}"

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    code = _filter_program(machine)
    instructions = (SockFilter * len(code))(*(SockFilter(*i) for i in code))
    program = SockFprog(len(code), instructions)
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, seccomp_syscall = 38, {"x86_64": 317, "aarch64": 277}[machine]
    seccomp_set_mode_filter, tsync = 1, 1
    try:
        _call(libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0), "no_new_privs")
        _call(libc.syscall(seccomp_syscall, seccomp_set_mode_filter, tsync, ctypes.byref(program)), "seccomp")
    except OSError as exc:
        return f"unavailable: {exc}"
    return "active: starting a process or running a program kills the child (seccomp)"


def _guard_fork_exec() -> None:
    """`_posixsubprocess.fork_exec` raises no audit event of its own; make it raise one, also where
    `subprocess` already holds the original (as `subprocess._fork_exec`)."""
    import _posixsubprocess
    import subprocess

    def fork_exec(*args):
        sys.audit("_posixsubprocess.fork_exec")
        raise PermissionError("process creation is not allowed")

    _posixsubprocess.fork_exec = fork_exec
    subprocess._fork_exec = fork_exec  # type: ignore[attr-defined]


def _read_roots(request: dict) -> tuple[str, ...]:
    import safeforge

    candidates = [
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        *sys.path,
        os.path.dirname(safeforge.__file__),
        request["workdir"],
        os.path.dirname(request["code"]),
    ]
    return tuple(sorted({os.path.realpath(c) for c in candidates if c and os.path.exists(c)}))


# -- running the task ----------------------------------------------------------------------------


def _code_traceback(exc: BaseException, code_path: str) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == code_path]
    return "".join(traceback.format_list(frames[-5:]))


def _build(request: dict) -> dict:
    import runpy

    from src.planner.solver import BasePlanner

    from safeforge.pddl.up_io import write_problem

    namespace = runpy.run_path(request["code"], run_name="despite_task")
    planner_class = namespace.get("DomainPlanner")
    if not (isinstance(planner_class, type) and issubclass(planner_class, BasePlanner)):
        return {"status": "error", "message": "code.py defines no class DomainPlanner(BasePlanner)"}
    planner = planner_class()
    domain, problem = write_problem(planner.build_problem(request["problem_name"]))
    warnings = [
        f"apply_danger_effects: no action named {name!r}; its danger condition is ignored" for name in planner.ignored_danger_actions
    ]
    return {"status": "ok", "domain": domain, "problem": problem, "warnings": warnings}


def _import_package(package_dir: str) -> None:
    """Make `safeforge` the package in `package_dir` (installed or editable, wherever it lives)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "safeforge", os.path.join(package_dir, "__init__.py"), submodule_search_locations=[package_dir]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["safeforge"] = module
    spec.loader.exec_module(module)


def _apply_rlimits(rlimits: dict[str, int]) -> str:
    import resource

    for name, value in rlimits.items():
        resource.setrlimit(getattr(resource, name), (value, value))
    return "active: " + ", ".join(f"{name.removeprefix('RLIMIT_')}={value}" for name, value in rlimits.items())


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    limits = _apply_rlimits(request["rlimits"])
    result_fd = os.dup(1)
    os.dup2(2, 1)  # code.py's prints go to stderr, never into the result
    layers = {"resource limits": limits, **(_os_layers(request) if request["namespaces"] else {})}
    _import_package(request["package_dir"])  # the same Safeforge as the parent's
    sys.path.insert(0, request["standin"])  # `from src.planner.solver import BasePlanner` finds ours

    import src.planner.solver  # noqa: F401
    import unified_planning.shortcuts  # noqa: F401  (imported before the hook: it reads many files)

    import safeforge.pddl.up_io  # noqa: F401

    # before the hook, which stops any use of ctypes
    layers["process filter"] = _install_process_filter() if request["process_filter"] else "off (disabled by the caller)"
    if request["audit_hook"]:
        _install_audit_hook(os.path.realpath(request["workdir"]), _read_roots(request), result_fd)
        _guard_fork_exec()
        layers["audit hook"] = "active: sockets, processes, ctypes, signals and file access outside the allowed places stop the child"
    else:
        layers["audit hook"] = "off (disabled by the caller)"
    _emit(result_fd, {"layers": layers})
    try:
        result = _build(request)
    except MemoryError:
        result = {"status": "memory", "message": "MemoryError: the memory limit was reached"}
    except BaseException as exc:  # noqa: BLE001 - everything code.py raises is reported
        result = {"status": "error", "message": f"{type(exc).__name__}: {exc}"[:2000], "traceback": _code_traceback(exc, request["code"])}
    _emit(result_fd, result)
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(0)  # no atexit handlers or lingering threads of code.py


if __name__ == "__main__":
    main()
