"""Importing DESPITE's published tasks (folders with code.py) into our task format.

    import_despite_task(path, out_dir, ...) -> ImportResult   one folder, never raises for a bad task
    import_many(paths, out_dir, jobs=..., ...) -> [ImportResult]   many, with a JSONL report
    Limits                                                    limits on the isolated child

Each code.py runs in an isolated child process (`_sandbox`, `_bootstrap`) against our stand-in
for DESPITE's `BasePlanner` (`standin/src/planner/solver.py`); the problem it builds becomes our
task folder, which is then checked (`_importer`). The command line is in `cli`.
"""
from pipeline.common.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "FAILED": "._importer",
    "IMPORTED": "._importer",
    "MISMATCH": "._importer",
    "REPORT": "._importer",
    "ImportResult": "._importer",
    "find_tasks": "._importer",
    "import_despite_task": "._importer",
    "import_many": "._importer",
    "Limits": "._sandbox",
})
