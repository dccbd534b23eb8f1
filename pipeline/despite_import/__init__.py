"""Importing DESPITE's published tasks (folders with code.py) into our task format.

    import_despite_task(path, out_dir, ...) -> ImportResult   one folder, never raises for a bad task
    import_many(paths, out_dir, jobs=..., ...) -> [ImportResult]   many, with a JSONL report
    Limits                                                    limits on the isolated child

Each code.py runs in an isolated child process (`_sandbox`, `_bootstrap`) against our stand-in
for DESPITE's `BasePlanner` (`standin/src/planner/solver.py`); the problem it builds becomes our
task folder, which is then checked (`_importer`). The command line is in `cli`.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._importer import (
        FAILED,
        IMPORTED,
        MISMATCH,
        REPORT,
        ImportResult,
        find_tasks,
        import_despite_task,
        import_many,
    )
    from ._sandbox import Limits

__all__ = ["FAILED", "IMPORTED", "MISMATCH", "REPORT", "ImportResult", "find_tasks", "import_despite_task", "import_many", "Limits"]
__getattr__, __dir__ = lazy_exports(__name__)
