"""The folder a workbench serves: a folder of task folders, one task folder, a run or a release.

Every task the workbench shows or writes is one this module found in that folder: a task is
addressed by its folder's name (its key), looked up among the folders found, so no request can
name a path. Folders that are symbolic links or hidden (a writer's staging folders) are not tasks.
A release's tasks are read from its archive into a scratch folder and are read-only; a run's tasks
are edited under the run's lock, and a run gets no new tasks (its tasks come from its records).
"""

from __future__ import annotations

import hashlib
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from safeforge.common.errors import SafeforgeError
from safeforge.publishing import ARCHIVE as RELEASE_ARCHIVE
from safeforge.runs import RecordRow, RunLedger, RunLock, is_run
from safeforge.runs.ledger import LEDGER_FILE
from safeforge.task import SAFETY_DOMAIN

Kind = Literal["tasks", "task", "run", "release"]


class WorkbenchError(SafeforgeError):
    """The workbench cannot serve a folder or do what was asked (the message says why)."""


@dataclass
class ReviewLink:
    """Where a task of a run stands in review, from the run's ledger."""

    state: str
    reason: str
    label_studio_url: str | None = None


class Workspace:
    """The served folder and the task folders in it."""

    def __init__(self, root: str | Path):
        root = Path(root).expanduser().absolute()
        if not root.is_dir():
            raise WorkbenchError(f"{root}: not a folder (give a folder of task folders, a task folder, a run or a release)")
        self.root = root.resolve()
        self._scratch: tempfile.TemporaryDirectory | None = None
        self._write_lock = threading.Lock()
        self.kind: Kind
        if (self.root / RELEASE_ARCHIVE).is_file():
            self.kind = "release"
            self._scratch = tempfile.TemporaryDirectory(prefix="safeforge-workbench-")
            try:
                with tarfile.open(self.root / RELEASE_ARCHIVE) as archive:
                    archive.extractall(self._scratch.name, filter="data")
            except (tarfile.TarError, OSError) as exc:
                self.close()
                raise WorkbenchError(f"{self.root / RELEASE_ARCHIVE}: cannot be read: {exc}") from None
            self.tasks_dir = Path(self._scratch.name)
        elif is_run(self.root):
            self.kind, self.tasks_dir = "run", self.root / "tasks"
        elif (self.root / SAFETY_DOMAIN).is_file():
            self.kind, self.tasks_dir = "task", self.root.parent
        else:
            self.kind, self.tasks_dir = "tasks", self.root

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    @property
    def description(self) -> str:
        return {
            "tasks": "a folder of task folders",
            "task": "one task folder",
            "run": "a run",
            "release": "a release (read-only)",
        }[self.kind]

    # -- the tasks ---------------------------------------------------------------------------
    def folders(self) -> dict[str, Path]:
        """Key (the folder's name) -> task folder, sorted by key."""
        if self.kind == "task":
            return {self.root.name: self.root}
        if not self.tasks_dir.is_dir():
            return {}
        found = {
            entry.name: entry
            for entry in self.tasks_dir.iterdir()
            if not entry.name.startswith(".") and not entry.is_symlink() and entry.is_dir() and (entry / SAFETY_DOMAIN).is_file()
        }
        return dict(sorted(found.items()))

    def folder(self, key: str) -> Path:
        """The task folder of `key`; WorkbenchError when the served folder holds no such task."""
        found = self.folders().get(key)
        if found is None:
            raise WorkbenchError(f"no task {key!r} in {self.root} ({self.description})")
        return found

    # -- what may be written -----------------------------------------------------------------
    @property
    def read_only_reason(self) -> str | None:
        if self.kind == "release":
            return "a release is read-only: edit the tasks in their run, or copy them into a folder of tasks"
        return None

    @property
    def new_tasks_reason(self) -> str | None:
        """Why no task can be created here (None: new tasks go into `tasks_dir`)."""
        if self.kind == "release":
            return "a release is read-only"
        if self.kind == "run":
            return "a run's tasks come from its records: start the workbench on a folder of tasks to create tasks"
        if self.kind == "task":
            return "the workbench serves one task folder: start it on the folder that holds it to create tasks"
        return None

    @property
    def edits_need_a_passing_check(self) -> bool:
        """A run's ledger holds its tasks as checked: an edit saved there must pass the check."""
        return self.kind == "run"

    @contextmanager
    def writing(self, purpose: str) -> Iterator[None]:
        """Hold what a write needs: one write at a time in this process, and for a run the run's
        lock (RunLocked when another process holds it)."""
        with self._write_lock:
            if self.kind == "run":
                with RunLock(self.root, purpose):
                    yield
            else:
                yield

    # -- review ------------------------------------------------------------------------------
    def review_links(self) -> dict[str, ReviewLink]:
        """For a run: task id -> its ledger state (and its Label Studio task once pushed)."""
        if self.kind != "run":
            return {}
        ledger = RunLedger(self.root / LEDGER_FILE)
        try:
            rows: list[RecordRow] = ledger.records()
            links = {}
            for row in rows:
                link = ReviewLink(row.state, row.reason)
                if row.state in ("in_review", "accepted", "rejected_by_review"):
                    link.label_studio_url = _label_studio_url(ledger, row.record_id)
                links[row.task_id or row.record_id] = link
            return links
        finally:
            ledger.close()


def _label_studio_url(ledger: RunLedger, record_id: str) -> str | None:
    """The Label Studio task a record was pushed to (from the push's ledger transition)."""
    for transition in reversed(ledger.history(record_id)):
        detail = transition.detail or {}
        if transition.to_state == "in_review" and {"url", "project_id", "ls_task_id"} <= detail.keys():
            try:
                project, task = int(detail["project_id"]), int(detail["ls_task_id"])
            except (TypeError, ValueError):
                return None
            url = str(detail["url"])
            return f"{url}/projects/{project}/data?task={task}" if url.startswith(("http://", "https://")) else None
    return None


def text_sha256(text: str) -> str:
    """The sha256 of `text` (UTF-8), in hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
