"""The `safeforge` entry point itself: how it ends when its reader goes away."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SAFEFORGE = [sys.executable, "-m", "safeforge.cli"]


@pytest.mark.parametrize("command", [["config"], ["sources", "list"], ["--help"]])
def test_output_into_a_closed_pipe_ends_quietly(command):
    """As `safeforge config | head -1` once the reader has gone: exit 0, nothing on stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader: every write fails with EPIPE
    try:
        done = subprocess.run([*SAFEFORGE, *command], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")
