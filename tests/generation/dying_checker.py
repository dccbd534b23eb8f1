"""A checker for worker-process tests, importable (and so picklable) by module path.

In a worker process it ends the process on the first record it is asked to check, as a crash or
the OOM killer would, after naming that record in DYING_CHECKER_DIR. In the run's own process it
first waits until a worker has imported it (and so is about to ask for records) and a second more,
so that a worker gets a record before the run's own lanes, which hold every lane while the workers
start, have taken them all.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from safeforge.generation import check_candidate

EXIT_CODE = 9
MARKS = "DYING_CHECKER_DIR"
WORKER_UP, DOOMED = "worker-up", "doomed"


def _in_worker() -> bool:
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    return spec is not None and spec.name == "safeforge.generation.worker"


def doomed_record() -> str:
    """The record the dead worker was checking."""
    return (Path(os.environ[MARKS]) / DOOMED).read_text()


def check_or_die(task_dir: Path):
    marks = Path(os.environ[MARKS])
    if _in_worker():
        (marks / DOOMED).write_text(Path(task_dir).parent.name)  # <run>/work/<record>/round-<n>
        os._exit(EXIT_CODE)
    deadline = time.monotonic() + 120
    while not (marks / WORKER_UP).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1)
    return check_candidate(task_dir, time_limit=30)


if _in_worker() and MARKS in os.environ:
    (Path(os.environ[MARKS]) / WORKER_UP).touch()
