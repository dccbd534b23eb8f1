"""A full disk ends a command with one message naming what could not be written, exit 2, no
traceback; nothing half-written is left behind."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests_paths import EXAMPLES, REPO

# a file-size limit makes every write past it fail as a full disk does (EFBIG instead of ENOSPC)
LIMITED = (
    "import resource, runpy, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
    "sys.argv = ['safeforge', *sys.argv[1:]]; runpy.run_module('safeforge.cli', run_name='__main__')"
)


def _run(limit: int, *args: str, cwd=REPO) -> subprocess.CompletedProcess:
    code = LIMITED.format(limit=limit)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_task_check_on_a_full_disk_names_the_file(tmp_path):
    folder = tmp_path / "bleach"
    shutil.copytree(EXAMPLES / "bathroom_bleach_bucket", folder)
    for derived in ("domain.pddl", "problem.pddl"):
        (folder / derived).unlink()
    done = _run(300, "task", "check", str(folder))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"error: {folder}/domain.pddl: cannot be written: File too large" in done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["metadata.json", "safety_domain.pddl", "safety_problem.pddl"]


def test_a_run_ledger_on_a_full_disk_names_the_database(tmp_path):
    script = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))\n"
        "from safeforge.common.errors import SafeforgeError\n"
        "from safeforge.runs.ledger import RunStore\n"
        "store = RunStore(sys.argv[1])\n"
        "try:\n"
        "    for batch in range(100):\n"
        "        store.ledger.register([(f'r{batch}_{i}', 'neiss', 'x' * 100) for i in range(50)])\n"
        "except SafeforgeError as exc:\n"
        "    print(exc)\n"
        "    print(len(store.ledger.records()))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "run")], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert "Traceback" not in done.stderr, done.stderr
    message, kept = done.stdout.splitlines()
    assert message.startswith(f"{tmp_path / 'run'}/ledger.sqlite: cannot be written: ")
    assert int(kept) % 50 == 0 and int(kept) > 0  # whole batches only: the failed one was rolled back
