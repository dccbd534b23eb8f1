"""A full disk during a generation run: the run stops with one line naming the file (exit 2), no
traceback per record, and no record is left in "error": the run resumes without --retry-errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tests_paths import REPO

# a file-size limit makes every write past it fail as a full disk does
LIMITED = (
    "import resource, runpy, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)); "
    "sys.argv = ['safeforge', *sys.argv[1:]]; runpy.run_module('safeforge.cli', run_name='__main__')"
)


@pytest.mark.parametrize("limit, workers", [(200_000, 1), (60_000, 2)])
def test_a_full_disk_stops_the_run_in_one_line_and_it_resumes_cleanly(tmp_path, replay_server, limit, workers):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SAFEFORGE_"))}
    env.update(OPENAI_BASE_URL=replay_server(), SAFEFORGE_MODEL="deepseek-chat")
    args = ["generate", "neiss", "--limit", "5", "--out", str(tmp_path), "--run", "r", "--concurrency", "4", "--workers", str(workers)]
    full = subprocess.run(
        [sys.executable, "-c", LIMITED.format(limit=limit), *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=300
    )
    assert full.returncode == 2, full.stderr
    assert "Traceback" not in full.stderr and "failed" not in full.stderr
    [error] = [line for line in full.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith(f"error: {tmp_path / 'r'}/") and ": cannot be written: " in error
    resumed = subprocess.run(
        [sys.executable, "-m", "safeforge.cli", *args, "--json"], capture_output=True, text=True, env=env, cwd=REPO, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["errors"] == {} and sum(summary["states"].values()) == 5
