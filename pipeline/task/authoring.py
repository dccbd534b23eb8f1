"""Making and editing task folders by hand: a new task from the scaffold or as a copy of another,
and an edit saved with its record. Everything is written through the one writer.

An edit keeps the task's provenance and review and appends one entry to `provenance.edits` (when,
with what, which files changed with their sha256 before and after, and whether the check passed).
What the check derives follows the new text: with a passing check, the reference plans and danger
conditions it found; with a failing one, no reference plans (the old ones no longer describe the
task) and the derived basic PDDL only when the structure holds.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path

from safeforge.common.errors import SafeforgeError
from safeforge.common.resources import package_path
from safeforge.task.checks import CheckReport, checked_metadata
from safeforge.task.files import METADATA, SAFETY_DOMAIN, SAFETY_PROBLEM, TaskError, read_task_file
from safeforge.task.folder import Task
from safeforge.task.metadata import TaskMetadata
from safeforge.task.writer import rewrite_task, write_task

TASK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{0,99}")
SCAFFOLD = package_path("safeforge", "templates", "new_task")


class AuthoringError(SafeforgeError):
    """A task cannot be created as asked (the message says why)."""


def check_task_name(name: str) -> str:
    """`name` if it can name a task and its folder; AuthoringError otherwise."""
    if not TASK_NAME.fullmatch(name):
        raise AuthoringError(f"task name {name!r} must start with a letter and use only letters, digits, _ and - (at most 100)")
    return name


def scaffold_task(parent: Path, name: str) -> Path:
    """A new task folder `parent/name` from the working scaffold (a small task that passes the check)."""
    target = _new_folder(parent, name)
    texts = {p.name: p.read_text(encoding="utf-8").replace("__NAME__", name) for p in SCAFFOLD.iterdir()}
    return write_task(target, texts[SAFETY_DOMAIN], texts[SAFETY_PROBLEM], TaskMetadata.model_validate_json(texts[METADATA]))


def copy_task(source: Task, parent: Path, name: str) -> Path:
    """A new task folder `parent/name` holding a copy of `source`'s safety PDDL and metadata, under
    its new id, with `provenance.copied_from` naming the original and no review (nobody reviewed it)."""
    target = _new_folder(parent, name)
    provenance = source.metadata.provenance.model_copy(update={"copied_from": source.task_id, "edits": []})
    metadata = source.metadata.model_copy(update={"task_id": name, "review": None, "provenance": provenance})
    return write_task(target, source.safety_domain, source.safety_problem, metadata)


def save_edit(edited: Task, report: CheckReport, tool: str) -> TaskMetadata:
    """Write `edited` (a task folder's new safety PDDL, read in memory, with the folder's metadata)
    over its folder in one step, with what `report` (its check) derived and a record of the edit;
    returns the metadata written."""
    folder = edited.path
    before = {name: _sha256(_read_or_empty(folder / name)) for name in (SAFETY_DOMAIN, SAFETY_PROBLEM)}
    after = {SAFETY_DOMAIN: _sha256(edited.safety_domain), SAFETY_PROBLEM: _sha256(edited.safety_problem)}
    record = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "tool": tool,
        "files": {name: {"sha256_before": before[name], "sha256_after": after[name]} for name in after if before[name] != after[name]},
        "check": {"ok": report.ok, "failed": [r.name for r in report.failed]},
    }
    if report.ok:
        metadata = checked_metadata(edited.metadata, report)
    else:
        update = {"reference_feasible_plans": None, "reference_plans": None}
        metadata = edited.metadata.model_copy(
            update=update | {"danger_conditions": report.danger_conditions, "context_predicates": report.context_predicates}
        )
    provenance = metadata.provenance.model_copy(update={"edits": [*metadata.provenance.edits, record]})
    metadata = metadata.model_copy(update={"provenance": provenance})
    rewrite_task(folder, edited.safety_domain, edited.safety_problem, metadata, report.basic_pddl)
    return metadata


def _new_folder(parent: Path, name: str) -> Path:
    target = Path(parent) / check_task_name(name)
    if target.exists() or target.is_symlink():
        raise AuthoringError(f"{target} already exists")
    return target


def _read_or_empty(path: Path) -> str:
    try:
        return read_task_file(path)
    except TaskError:
        return ""


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
