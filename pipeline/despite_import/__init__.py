"""Importing DESPITE's published tasks (folders with code.py) into our task format.

    import_despite_task(path, out_dir, ...) -> ImportResult   one folder, never raises for a bad task
    import_many(paths, out_dir, jobs=..., ...) -> [ImportResult]   many, with a JSONL report
    Limits                                                    limits on the isolated child

Each code.py runs in an isolated child process (`_sandbox`, `_bootstrap`) against our stand-in
for DESPITE's `BasePlanner` (`standin/src/planner/solver.py`); the problem it builds becomes our
task folder, which is then checked (`_importer`). The command line is in `cli`.
"""

from typing import TYPE_CHECKING

from pipeline.common.lazy import lazy_exports

if TYPE_CHECKING:  # the names below, for type checkers; at run time they load on first use
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

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "FAILED": "._importer",
        "IMPORTED": "._importer",
        "MISMATCH": "._importer",
        "REPORT": "._importer",
        "ImportResult": "._importer",
        "find_tasks": "._importer",
        "import_despite_task": "._importer",
        "import_many": "._importer",
        "Limits": "._sandbox",
    },
)
