"""The task folder: safety-augmented PDDL (the source of truth), metadata, derived basic PDDL.

- metadata: `TaskMetadata`, the typed contract of metadata.json (and its JSON Schema).
- files: the file names of a task folder, `read_task_file`, `read_metadata`, `TaskError`.
- writer: the one writer of task folders (`write_task`, `rewrite_task`, `write_metadata`, `write_basic_pddl`).
- folder: `Task` (load, parse, derive).
- checks: `check_task` (pure: a `CheckReport`), `checked_metadata`, `record_check`.
- diagnostics: every problem a check found, at its file, line and columns (`task check --json`, the workbench).
- authoring: by hand: `scaffold_task`, `copy_task`, `save_edit` (an edit, recorded in provenance).
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from .authoring import AuthoringError, check_task_name, copy_task, save_edit, scaffold_task
    from .checks import CheckReport, CheckResult, check_task, check_task_within, checked_metadata, record_check
    from .diagnostics import Diagnostic, diagnose, read_problems
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
    from .writer import rewrite_task, write_basic_pddl, write_metadata, write_task

__all__ = [
    "AuthoringError",
    "check_task_name",
    "copy_task",
    "save_edit",
    "scaffold_task",
    "CheckReport",
    "CheckResult",
    "check_task",
    "check_task_within",
    "checked_metadata",
    "record_check",
    "Diagnostic",
    "diagnose",
    "read_problems",
    "BASIC_DOMAIN",
    "BASIC_PROBLEM",
    "METADATA",
    "SAFETY_DOMAIN",
    "SAFETY_PROBLEM",
    "TaskError",
    "read_metadata",
    "read_task_file",
    "Task",
    "TaskMetadata",
    "rewrite_task",
    "write_basic_pddl",
    "write_metadata",
    "write_task",
]
__getattr__, __dir__ = lazy_exports(__name__)
