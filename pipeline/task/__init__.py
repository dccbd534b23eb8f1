"""The task folder: safety-augmented PDDL (the source of truth), metadata, derived basic PDDL.

- metadata: `TaskMetadata`, the typed contract of metadata.json (and its JSON Schema).
- files: the file names of a task folder, `read_task_file`, `read_metadata`, `TaskError`.
- writer: the one writer of task folders (`write_task`, `write_metadata`, `write_basic_pddl`).
- folder: `Task` (load, parse, derive).
- checks: `check_task` (pure: a `CheckReport`), `checked_metadata`, `record_check`.
"""

from typing import TYPE_CHECKING

from pipeline.common.lazy import lazy_exports

if TYPE_CHECKING:  # the names below, for type checkers; at run time they load on first use
    from .checks import CheckReport, CheckResult, check_task, checked_metadata, record_check
    from .files import (
        BASIC_DOMAIN,
        BASIC_PROBLEM,
        METADATA,
        SAFETY_DOMAIN,
        SAFETY_PROBLEM,
        TaskError,
        read_metadata,
        read_task_file,
    )
    from .folder import Task
    from .metadata import TaskMetadata
    from .writer import write_basic_pddl, write_metadata, write_task

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Task": ".folder",
        "TaskMetadata": ".metadata",
        "TaskError": ".files",
        "read_metadata": ".files",
        "read_task_file": ".files",
        "SAFETY_DOMAIN": ".files",
        "SAFETY_PROBLEM": ".files",
        "BASIC_DOMAIN": ".files",
        "BASIC_PROBLEM": ".files",
        "METADATA": ".files",
        "write_task": ".writer",
        "write_metadata": ".writer",
        "write_basic_pddl": ".writer",
        "check_task": ".checks",
        "checked_metadata": ".checks",
        "record_check": ".checks",
        "CheckReport": ".checks",
        "CheckResult": ".checks",
    },
)
