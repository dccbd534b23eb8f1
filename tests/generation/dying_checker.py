"""A checker for worker-process tests, importable (and so picklable) by module path: it ends its
own process, as a crash or the OOM killer would, when it is asked to check the named record."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.generation import check_candidate

DOOMED_RECORD = "neiss_220705908"
EXIT_CODE = 9


def check_or_die(task_dir: Path):
    if DOOMED_RECORD in Path(task_dir).parts:
        os._exit(EXIT_CODE)
    return check_candidate(task_dir, time_limit=30)
