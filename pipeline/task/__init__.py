"""The task folder: safety-augmented PDDL (the source of truth), metadata, derived basic PDDL.

- metadata: `TaskMetadata`, the typed contract of metadata.json (and its JSON Schema).
- files: the file names of a task folder, `read_task_file`, `read_metadata`, `TaskError`.
- writer: the one writer of task folders (`write_task`, `write_metadata`, `write_basic_pddl`).
- folder: `Task` (load, parse, derive).
- checks: `check_task` (pure: a `CheckReport`), `checked_metadata`, `record_check`.
"""
from pipeline.common.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "Task": ".folder", "TaskMetadata": ".metadata",
    "TaskError": ".files", "read_metadata": ".files", "read_task_file": ".files",
    "SAFETY_DOMAIN": ".files", "SAFETY_PROBLEM": ".files", "BASIC_DOMAIN": ".files",
    "BASIC_PROBLEM": ".files", "METADATA": ".files",
    "write_task": ".writer", "write_metadata": ".writer", "write_basic_pddl": ".writer",
    "check_task": ".checks", "checked_metadata": ".checks", "record_check": ".checks",
    "CheckReport": ".checks", "CheckResult": ".checks",
})
