"""The task folder: safety-augmented PDDL (the source of truth), metadata, derived basic PDDL.

- folder: `Task` (load, parse, derive), `TaskError`, the file names of a task folder.
- checks: `check_task`, every check a task must pass (`CheckReport`, `CheckResult`).
"""
from pipeline.common.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "Task": ".folder", "TaskError": ".folder", "read_metadata": ".folder", "write_atomically": ".folder",
    "SAFETY_DOMAIN": ".folder", "SAFETY_PROBLEM": ".folder", "BASIC_DOMAIN": ".folder",
    "BASIC_PROBLEM": ".folder", "METADATA": ".folder",
    "check_task": ".checks", "CheckReport": ".checks", "CheckResult": ".checks",
})
