"""`<run>/review.json`: which Label Studio project holds the run, and which task is which.

    {"url": ..., "project_id": 3, "project_title": "...",
     "tasks": {"<task_id>": {"record_id": "...", "ls_task_id": 17}}}

It is rebuilt from Label Studio itself on every push (each imported task carries its `task_id`
and `record_id` in its data), so an interrupted push loses nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from safeforge.common.files import write_atomically
from safeforge.review._errors import ReviewError
from safeforge.runs.ledger import RunStore

MAPPING_FILE = "review.json"


@dataclass
class TaskLink:
    record_id: str
    ls_task_id: int


@dataclass
class ReviewMapping:
    url: str = ""
    project_id: int | None = None
    project_title: str = ""
    tasks: dict[str, TaskLink] = field(default_factory=dict)
    progress: dict[str, str] = field(default_factory=dict)
    """task_id -> votes so far of a task still in review ("1 of 2"), as the last pull saw them."""
    duplicates: dict[str, list[int]] = field(default_factory=dict)
    """task_id -> Label Studio ids of the extra copies of a task the last pull saw."""

    @classmethod
    def load(cls, store: RunStore) -> ReviewMapping:
        path = store.root / MAPPING_FILE
        if not path.exists():
            return cls()
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                raw.get("url", ""),
                raw.get("project_id"),
                raw.get("project_title", ""),
                {task_id: TaskLink(**link) for task_id, link in raw.get("tasks", {}).items()},
                {str(k): str(v) for k, v in raw.get("progress", {}).items()},
                {str(k): [int(i) for i in v] for k, v in raw.get("duplicates", {}).items()},
            )
        except (ValueError, TypeError, AttributeError) as exc:
            raise ReviewError(f"{path}: not a review mapping ({exc}); remove it and push again to rebuild it from Label Studio") from None

    def save(self, store: RunStore) -> None:
        payload = {
            "url": self.url,
            "project_id": self.project_id,
            "project_title": self.project_title,
            "tasks": {
                task_id: {"record_id": link.record_id, "ls_task_id": link.ls_task_id} for task_id, link in sorted(self.tasks.items())
            },
            "progress": dict(sorted(self.progress.items())),
            "duplicates": dict(sorted(self.duplicates.items())),
        }
        write_atomically(store.root / MAPPING_FILE, json.dumps(payload, indent=2) + "\n")
