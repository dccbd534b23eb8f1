"""`<run>/review.json`: which Label Studio project holds the run, which task is which, who adjudicates,
and what the last pull saw.

    {"url": ..., "project_id": 3, "project_title": "...", "adjudicators": ["lead@example.org"],
     "tasks": {"<task_id>": {"record_id": "...", "ls_task_id": 17}},
     "progress": {"<task_id>": "1 of 2"}, "queue": {"<task_id>": "votes split: ..."}, "duplicates": {...}}

The task links are rebuilt from Label Studio itself on every push (each imported task carries its
`task_id` and `record_id` in its data), so an interrupted push loses nothing. The adjudicators are
the run's own (`review push --adjudicator`). The formalization review keeps the same mapping of its
own project in `<run>/review_formalizations.json` (its tasks are named by record id).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from safeforge.common.files import write_atomically
from safeforge.review._errors import ReviewError
from safeforge.runs.ledger import RunStore

MAPPING_FILE = "review.json"
FORMALIZATION_MAPPING_FILE = "review_formalizations.json"


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
    adjudicators: list[str] = field(default_factory=list)
    """E-mails of the people whose adjudication decides (lower case)."""
    queue: dict[str, str] = field(default_factory=dict)
    """task_id -> why it waits for an adjudicator, as the last pull saw it."""
    file: str = MAPPING_FILE
    """The file in the run's folder (the review's, or the formalization review's)."""

    @classmethod
    def load(cls, store: RunStore, file: str = MAPPING_FILE) -> ReviewMapping:
        path = store.root / file
        if not path.exists():
            return cls(file=file)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                raw.get("url", ""),
                raw.get("project_id"),
                raw.get("project_title", ""),
                {task_id: TaskLink(**link) for task_id, link in raw.get("tasks", {}).items()},
                {str(k): str(v) for k, v in raw.get("progress", {}).items()},
                {str(k): [int(i) for i in v] for k, v in raw.get("duplicates", {}).items()},
                [str(a) for a in raw.get("adjudicators", [])],
                {str(k): str(v) for k, v in raw.get("queue", {}).items()},
                file,
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
            "adjudicators": self.adjudicators,
            "queue": dict(sorted(self.queue.items())),
        }
        write_atomically(store.root / self.file, json.dumps(payload, indent=2) + "\n")
