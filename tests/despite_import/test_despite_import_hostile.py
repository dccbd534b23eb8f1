"""Hostile code.py files: each is stopped and reported, the import goes on, and nothing leaks.

Every scenario runs twice where it matters: with the audit hook (the default) and with the OS
layers alone (namespaces, read-only filesystem, dropped capabilities, resource limits), so that
each layer is shown to hold on its own. The scenarios run concurrently, once per module.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
from busy_machine import HANG_S, eventually

from safeforge.despite_import import FAILED, REPORT, Limits, import_many
from safeforge.despite_import._sandbox import namespace_command

HOSTILE = Path(__file__).resolve().parents[1] / "fixtures" / "despite" / "hostile"
BENIGN = Path(__file__).resolve().parents[1] / "fixtures" / "despite" / "elderly_care_water_bottle"
REPO = Path(__file__).resolve().parents[2]
SENTINEL = f"sk_sentinel_{uuid.uuid4().hex}"
SECRET_TEXT = f"topsecret{uuid.uuid4().hex}"
OS_ONLY = Limits(audit_hook=False, process_filter=False)
FILTER_ONLY = Limits(audit_hook=False)
NAMESPACES = bool(namespace_command())
needs_namespaces = pytest.mark.skipif(not NAMESPACES, reason="no namespaces here: the OS layers are not active")

_ENV_PARENT = """
import json, sys
from safeforge.despite_import import Limits, import_many
[result] = import_many([sys.argv[1]], sys.argv[2], limits=Limits(audit_hook=False))
print(json.dumps(result.to_dict()))
"""


def _prepare(name: str, folder: Path, **substitutions: str) -> Path:
    target = Path(shutil.copytree(HOSTILE / name, folder / name))
    code = (target / "code.py").read_text()
    for placeholder, value in substitutions.items():
        code = code.replace(f"__{placeholder}__", value)
    (target / "code.py").write_text(code)
    return target


def _import(source: Path, out: Path, limits: Limits | None = None) -> dict:
    [result] = import_many([source], out, limits=limits or Limits())
    return {"result": result, "out": out}


def _env_secret_in_a_parent_holding_the_secret(source: Path, out: Path) -> dict:
    """The importer runs as its own process whose initial environment holds the secret, so the
    secret is in its /proc/<pid>/environ, and the audit hook is off: only the OS layers hide it."""
    env = {**os.environ, "OPENAI_API_KEY": SENTINEL, "HF_TOKEN": SENTINEL, "AWS_SECRET_ACCESS_KEY": SENTINEL}
    run = subprocess.run(
        [sys.executable, "-c", _ENV_PARENT, str(source), str(out)], capture_output=True, text=True, timeout=120, env=env, cwd=REPO
    )
    return {"run": run, "out": out}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every scenario, run once; `listener` is the socket the hostile code tries to reach."""
    base = tmp_path_factory.mktemp("hostile")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    port = str(listener.getsockname()[1])
    scratch = base / "tmp"
    scratch.mkdir()
    targets = {mode: base / f"escaped-{mode}.txt" for mode in ("hook", "os")}
    scenarios = {}
    for mode, limits in (("hook", Limits()), ("os", OS_ONLY)):
        folder = base / mode
        folder.mkdir()
        scenarios[f"socket-{mode}"] = (_import, _prepare("socket_connect", folder, PORT=port), base / f"out-socket-{mode}", limits)
        scenarios[f"write-{mode}"] = (
            _import,
            _prepare("write_outside", folder, TARGET=str(targets[mode])),
            base / f"out-write-{mode}",
            limits,
        )
        scenarios[f"fork-{mode}"] = (_import, HOSTILE / "fork_daemon", base / f"out-fork-{mode}", limits)
    secret = base / "secret.txt"
    secret.write_text(SECRET_TEXT)
    secret.chmod(0o600)
    for mode, limits in (("hook", Limits()), ("os", OS_ONLY)):
        scenarios[f"secret-{mode}"] = (
            _import,
            _prepare("read_secret", base / mode, SECRET=str(secret)),
            base / f"out-secret-{mode}",
            limits,
        )
    for mode, limits in (("hook", Limits()), ("filter", FILTER_ONLY)):
        for name in ("fork_exec_reimport", "fork_daemon"):
            scenarios[f"{name}-{mode}"] = (_import, HOSTILE / name, base / f"out-{name}-{mode}", limits)
    scenarios["bomb-os"] = (_import, HOSTILE / "fork_bomb", base / "out-bomb-os", OS_ONLY)
    scenarios["bomb-hook"] = (_import, HOSTILE / "fork_bomb", base / "out-bomb-hook", Limits())
    scenarios["forge"] = (_import, HOSTILE / "forge_result", base / "out-forge", Limits())
    scenarios["env-hook"] = (_import, HOSTILE / "env_secret", base / "out-env-hook", Limits())
    scenarios["env-os"] = (_env_secret_in_a_parent_holding_the_secret, HOSTILE / "env_secret", base / "out-env-os")
    scenarios["loop"] = (_import, HOSTILE / "infinite_loop", base / "out-loop", Limits(seconds=3))
    scenarios["memory"] = (_import, HOSTILE / "memory_hog", base / "out-memory", Limits(memory_mb=768))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", SENTINEL)
        patch.setattr(tempfile, "tempdir", str(scratch))
        with ThreadPoolExecutor(max_workers=3) as pool:
            futures = {name: pool.submit(*spec) for name, spec in scenarios.items()}
            results = {name: future.result() for name, future in futures.items()}
    try:
        connection, _ = listener.accept()
        connection.close()
        results["connections"] = 1
    except BlockingIOError:
        results["connections"] = 0
    listener.close()
    results["scratch"], results["targets"] = scratch, targets
    return results


def _everything_written(out: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())


def test_secrets_in_our_environment_never_reach_the_task(runs):
    run = runs["env-hook"]
    result = run["result"]
    assert result.outcome == FAILED
    assert result.reason == ("code.py blocked: os.listdir ('/proc',): listing a directory outside the allowed ones")
    assert SENTINEL not in json.dumps(result.to_dict()) + _everything_written(run["out"])


@needs_namespaces
def test_secrets_in_the_importers_proc_environ_are_hidden_by_the_pid_namespace(runs):
    run = runs["env-os"]
    assert run["run"].returncode == 0, run["run"].stderr
    result = json.loads(run["run"].stdout)
    domain = (run["out"] / "hostile_env_secret" / "safety_domain.pddl").read_text()
    assert "leak_path_" in domain.lower()  # the hostile code ran and published what it found...
    everything = run["run"].stdout + run["run"].stderr + _everything_written(run["out"])
    assert SENTINEL not in everything  # ...which never included our secret
    assert result["isolation"]["pid namespace"].startswith("active")


def test_socket_is_blocked_even_after_tampering_with_the_hook(runs):
    result = runs["socket-hook"]["result"]
    assert result.outcome == FAILED
    assert result.reason.startswith("code.py blocked: socket.")
    assert runs["connections"] == 0


@needs_namespaces
def test_without_the_hook_there_is_no_network(runs):
    result = runs["socket-os"]["result"]
    assert result.outcome == FAILED
    assert result.reason == "code.py error: OSError: [Errno 101] Network is unreachable"
    assert runs["connections"] == 0


def test_writing_outside_the_private_directory_is_blocked(runs):
    result = runs["write-hook"]["result"]
    assert result.outcome == FAILED
    assert result.reason.startswith("code.py blocked: open (")
    assert result.reason.endswith(": writing outside the private directory")
    assert not runs["targets"]["hook"].exists()


@needs_namespaces
def test_without_the_hook_nothing_outside_the_private_root_exists(runs):
    result = runs["write-os"]["result"]
    assert result.outcome == FAILED
    assert result.reason.startswith("code.py error: FileNotFoundError: [Errno 2] No such file or directory")
    assert not runs["targets"]["os"].exists()


def test_a_process_started_past_popen_is_blocked_and_no_secret_leaks(runs):
    run = runs["secret-hook"]
    assert run["result"].outcome == FAILED
    assert run["result"].reason.startswith("code.py blocked: open (")  # open() comes first
    assert SECRET_TEXT not in json.dumps(run["result"].to_dict()) + _everything_written(run["out"])


@needs_namespaces
def test_without_the_hook_a_file_outside_the_task_cannot_be_read_at_all(runs):
    run = runs["secret-os"]
    domain = (run["out"] / "hostile_read_secret" / "safety_domain.pddl").read_text().lower()
    assert "leak_open_failed_filenotfounderror" in domain  # the code ran and published what it got
    assert "leak_cat_" in domain
    assert SECRET_TEXT not in json.dumps(run["result"].to_dict()) + _everything_written(run["out"])


@needs_namespaces
def test_without_the_hook_the_process_count_is_limited(runs):
    run = runs["bomb-os"]
    domain = (run["out"] / "hostile_fork_bomb" / "safety_domain.pddl").read_text().lower()
    forked = int(domain.split("forked_")[1].split()[0].rstrip(")"))
    assert 0 < forked < Limits().processes
    assert runs["bomb-hook"]["result"].reason == "code.py blocked: os.fork (): not allowed"


def test_a_forged_result_is_held_to_the_size_limit(runs):
    result = runs["forge"]["result"]
    assert result.outcome == FAILED
    assert result.reason.startswith("code.py error: the PDDL it built is ")
    assert result.reason.endswith("bytes; the limit is 1,048,576 (SAFEFORGE_MAX_PDDL_BYTES)")
    assert not list(runs["forge"]["out"].glob("hostile_forge_result*"))  # no task folder, not even half of one


def test_an_endless_loop_is_stopped_by_the_time_limit(runs):
    result = runs["loop"]["result"]
    assert result.outcome == FAILED
    assert result.reason == "code.py timeout: stopped after the time limit of 3s"
    assert result.seconds >= 3


def test_unbounded_allocation_is_stopped_by_the_memory_limit(runs):
    result = runs["memory"]["result"]
    assert result.outcome == FAILED
    assert result.reason == "code.py memory: MemoryError: the memory limit was reached"


def test_forking_is_blocked(runs):
    result = runs["fork-hook"]["result"]
    assert result.outcome == FAILED
    assert result.reason == "code.py blocked: os.fork (): not allowed"


FILTERED = "code.py blocked: it started a process or ran a program (stopped by the process filter)"


def test_a_process_started_through_a_fresh_copy_of_posixsubprocess_is_blocked(runs):
    """fork_exec of a re-imported _posixsubprocess raises no audit event: the process filter stops
    it, with the hook and on its own; nothing of the task is imported."""
    for mode in ("hook", "filter"):
        run = runs[f"fork_exec_reimport-{mode}"]
        assert run["result"].outcome == FAILED and run["result"].reason == FILTERED, mode
        assert run["result"].isolation["process filter"].startswith("active"), mode
        assert not list(run["out"].glob("hostile_*"))


def test_without_the_hook_the_process_filter_stops_a_fork(runs):
    assert runs["fork_daemon-filter"]["result"].reason == FILTERED
    assert runs["fork_daemon-hook"]["result"].reason == "code.py blocked: os.fork (): not allowed"  # the hook comes first


def _processes_mentioning(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(entry.name)
        except OSError:
            pass
    return found


@needs_namespaces
def test_without_the_hook_a_detached_daemon_dies_with_the_import(runs):
    result = runs["fork-os"]["result"]
    assert result.outcome != FAILED, result.reason  # the task itself was built
    eventually(lambda: not _processes_mentioning('"problem_name": "hostile_fork_daemon"'), "the daemon gone with the import")


def _cpu_seconds(pids: list[str]) -> float:
    """The CPU time the processes have used (the child's loop spins: its CPU time grows)."""
    total = 0.0
    for pid in pids:
        try:
            total += sum(psutil.Process(int(pid)).cpu_times()[:2])
        except psutil.Error:
            pass
    return total


def test_no_temporary_directory_is_left_behind(runs):
    assert list(runs["scratch"].glob("safeforge-despite-*")) == []


def test_each_failure_is_in_the_report(runs):
    for name in ("socket-hook", "write-hook", "loop", "memory"):
        report = [json.loads(line) for line in (runs[name]["out"] / REPORT).read_text().splitlines()]
        assert [r["outcome"] for r in report] == [FAILED]
        assert report[0]["reason"] == runs[name]["result"].reason


@needs_namespaces
def test_every_isolation_layer_is_active_here(runs):
    layers = runs["socket-hook"]["result"].isolation
    assert set(layers) == {
        "minimal environment",
        "private directory",
        "dies with the importer",
        "resource limits",
        "time limit",
        "network namespace",
        "pid namespace",
        "mount namespace",
        "private root",
        "capabilities dropped",
        "unprivileged user",
        "process filter",
        "audit hook",
    }
    assert all(state.startswith("active") for state in layers.values()), layers


def test_a_symlinked_code_py_is_refused_without_reading_its_target(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET_TEXT + "\nsecond line")
    task = Path(shutil.copytree(BENIGN, tmp_path / "linked"))
    (task / "code.py").unlink()
    (task / "code.py").symlink_to(secret)
    [result] = import_many([task], tmp_path / "out")
    assert result.outcome == FAILED
    assert result.reason == "code.py refused: code.py is a symbolic link, not a regular file"
    assert SECRET_TEXT not in json.dumps(result.to_dict()) + (tmp_path / "out" / REPORT).read_text()


def test_a_hard_linked_code_py_is_refused_without_reading_it(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET_TEXT + " second word")
    secret.chmod(0o600)
    task = Path(shutil.copytree(BENIGN, tmp_path / "linked"))
    (task / "code.py").unlink()
    os.link(secret, task / "code.py")
    [result] = import_many([task], tmp_path / "out")
    assert result.outcome == FAILED
    assert result.reason == "code.py refused: code.py has 2 names (hard links); only a file with one name is read"
    assert SECRET_TEXT not in json.dumps(result.to_dict()) + (tmp_path / "out" / REPORT).read_text()


def test_a_fifo_code_py_is_refused_as_what_it_is(tmp_path):
    task = Path(shutil.copytree(BENIGN, tmp_path / "fifo"))
    (task / "code.py").unlink()
    os.mkfifo(task / "code.py")
    [result] = import_many([tmp_path], tmp_path / "out")  # found as a task folder, though code.py is no file
    assert result.outcome == FAILED
    assert result.reason == "code.py refused: code.py is a FIFO, not a regular file"


_KILLED_PARENT = """
import sys
from safeforge.despite_import import Limits, import_many
import_many([sys.argv[1]], sys.argv[2], limits=Limits(seconds=300))
"""


@needs_namespaces
def test_killing_the_importer_ends_the_sandboxed_child(tmp_path):
    importer = subprocess.Popen(
        [sys.executable, "-c", _KILLED_PARENT, str(HOSTILE / "infinite_loop"), str(tmp_path / "out")],
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    marker = '"problem_name": "hostile_infinite_loop"'
    eventually(lambda: _processes_mentioning("_bootstrap.py"), "the sandboxed child started")
    eventually(lambda: _cpu_seconds(_processes_mentioning("_bootstrap.py")) >= 2.0, "the child spinning in code.py's loop")
    importer.kill()
    importer.wait(timeout=HANG_S)
    eventually(lambda: not _processes_mentioning("_bootstrap.py"), "the sandboxed child gone with its importer")
    assert _processes_mentioning(marker) == []
    assert list(tmp_path.glob("safeforge-despite-*")) == []  # its private root went with its namespace


_IMPORT_FROM_COPY = """
import json, sys
from safeforge.despite_import import import_many
[result] = import_many([sys.argv[1]], sys.argv[2])
print(json.dumps(result.to_dict()))
"""


@needs_namespaces
def test_a_checkout_under_tmp_imports_inside_the_private_root():
    """A clone under /tmp (as CI may make) stays visible in the child: the private root's tmpfs is
    placed on a directory that holds none of the paths the child needs."""
    checkout = Path(tempfile.mkdtemp(prefix="safeforge-clone-", dir="/tmp"))
    try:
        shutil.copytree(REPO / "pipeline", checkout / "safeforge", ignore=shutil.ignore_patterns("__pycache__"))  # found before the install
        done = subprocess.run(
            [sys.executable, "-c", _IMPORT_FROM_COPY, str(BENIGN), str(checkout / "out")],
            cwd=checkout,
            env={**os.environ, "PYTHONPATH": str(checkout)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.splitlines()[-1])
        assert result["outcome"] != FAILED, result
        assert result["isolation"]["private root"].startswith("active"), result["isolation"]
    finally:
        shutil.rmtree(checkout)


def test_terminal_escapes_from_hostile_code_are_printed_escaped(tmp_path, capsys):
    from safeforge.cli.main import main

    assert main(["import-despite", str(HOSTILE / "escape_codes"), "--out", str(tmp_path / "out")]) == 1
    printed = capsys.readouterr()
    assert not any(char in printed.out + printed.err for char in "\x1b\x07\r\u202e")
    assert "failed   hostile_escape_codes: code.py error: SystemExit: \\x1b[2J\\x1b[H\\x1b[32m3 imported" in printed.out
    assert printed.out.splitlines()[-2] == "0 imported, 0 mismatch, 1 failed (report: " + str(tmp_path / "out" / REPORT) + ")"
