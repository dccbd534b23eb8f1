"""The list of tasks: each task's check status, source, danger group and review state, filterable.

The status is found without planners, in milliseconds a task, and kept until the task's files
change: `unreadable` (the files cannot be read as a task), `fails` (the structure check fails, or
the recorded reference plans no longer score safe 2 / unsafe 1), `not checked` (no reference plans
recorded) or `checked`. The full check runs on the task's page.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from safeforge.pddl.errors import PDDLError
from safeforge.task import METADATA, SAFETY_DOMAIN, SAFETY_PROBLEM, Task, TaskError
from safeforge.workbench._workspace import ReviewLink, Workspace, text_sha256

STATUSES = ("checked", "not checked", "fails", "unreadable")
FILTERS = ("status", "source", "group", "review")
_REVIEW_STATES = {"checked": "not pushed", "in_review": "in review", "rejected_by_review": "rejected"}


@dataclass(frozen=True)
class TaskRow:
    key: str
    task_id: str
    status: str
    status_detail: str
    source: str
    group: str
    review: str
    setting: str

    def value(self, name: str) -> str:
        return {"status": self.status, "source": self.source, "group": self.group, "review": self.review}[name]

    def matches(self, query: str) -> bool:
        query = query.strip().lower()
        return not query or any(query in text.lower() for text in (self.key, self.task_id, self.setting))


class Listing:
    """The rows of a workspace's tasks, each kept until its files change."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self._rows: dict[str, tuple[tuple, TaskRow]] = {}

    def rows(self) -> list[TaskRow]:
        reviews = self.workspace.review_links()
        rows = []
        for key, folder in self.workspace.folders().items():
            stamp = (_stamp(folder), reviews.get(key))
            cached = self._rows.get(key)
            if cached is None or cached[0] != stamp:
                cached = self._rows[key] = (stamp, _row(key, folder, reviews.get(key), self.workspace.kind == "release"))
            rows.append(cached[1])
        return rows

    def choices(self, rows: list[TaskRow]) -> dict[str, list[str]]:
        """The values each filter can take among `rows`."""
        found = {name: sorted({row.value(name) for row in rows}) for name in FILTERS}
        found["status"] = [s for s in STATUSES if s in found["status"]]
        return found


def select(rows: list[TaskRow], query: str = "", **filters: str) -> list[TaskRow]:
    """The rows matching the text query and every filter given (an empty filter matches all)."""
    return [row for row in rows if row.matches(query) and all(not want or row.value(name) == want for name, want in filters.items())]


def _stamp(folder: Path) -> tuple:
    stamp: list[tuple[int, int, int] | None] = []
    for name in (SAFETY_DOMAIN, SAFETY_PROBLEM, METADATA):
        try:
            info = os.lstat(folder / name)
            stamp.append((info.st_mtime_ns, info.st_size, info.st_ino))
        except OSError:
            stamp.append(None)
    return tuple(stamp)


def _row(key: str, folder: Path, review: ReviewLink | None, released: bool) -> TaskRow:
    try:
        task = Task.load(folder)
    except (TaskError, PDDLError) as exc:
        return TaskRow(key, key, "unreadable", str(exc), "", "", _review_label(None, review, released), "")
    metadata = task.metadata
    formalization = metadata.danger_formalization
    status, detail = _status(task)
    return TaskRow(
        key,
        task.task_id,
        status,
        detail,
        metadata.source or "",
        (formalization.danger_group or "") if formalization else "",
        _review_label(task, review, released),
        (formalization.setting or "") if formalization else "",
    )


def _status(task: Task) -> tuple[str, str]:
    if task.too_large is not None:
        return "unreadable", task.too_large
    if not task.analysis.ok:
        return "fails", "structure: " + "; ".join(task.analysis.issues)
    plans = task.metadata.reference_feasible_plans
    if (failed := _failed_edit(task)) is not None:
        return "fails", failed
    if plans is None:
        return "not checked", "no reference plans in metadata.json"
    safe, unsafe = task.validator.check(plans.safe), task.validator.check(plans.unsafe)
    problems = []
    if safe.score != 2:
        problems.append(f"the recorded safe plan scores {safe.score}, not 2: {safe.reason}")
    if unsafe.score != 1:
        problems.append(f"the recorded unsafe plan scores {unsafe.score}, not 1: {unsafe.reason or 'it is safe'}")
    if problems:
        return "fails", "; ".join(problems)
    return "checked", "the recorded reference plans score safe 2, unsafe 1"


def _failed_edit(task: Task) -> str | None:
    """Why the check saved with the task's last edit failed, while the files are still that edit's (None otherwise)."""
    edits = task.metadata.provenance.edits
    if not edits or edits[-1].get("check", {}).get("ok", True):
        return None
    edit = edits[-1]
    current = {SAFETY_DOMAIN: task.safety_domain, SAFETY_PROBLEM: task.safety_problem}
    for name, change in edit.get("files", {}).items():
        if name not in current or change.get("sha256_after") != text_sha256(current[name]):
            return None
    return f"the check of the last edit ({edit.get('at', '?')}) fails: " + ", ".join(edit["check"].get("failed", []))


def _review_label(task: Task | None, review: ReviewLink | None, released: bool) -> str:
    if review is not None:
        return _REVIEW_STATES.get(review.state, review.state.replace("_", " "))
    decision = task.metadata.review.decision if task is not None and task.metadata.review is not None else None
    if decision is not None:
        return decision
    return "released" if released else "not reviewed"
