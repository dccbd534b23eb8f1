"""The benchmarks' execution check memo, in a module of its own so that worker processes can
unpickle it (`WorkerProcesses` sends the checker to them)."""

from __future__ import annotations

import copy
import hashlib
import tempfile
import threading
from pathlib import Path
from typing import Any

from safeforge.generation import GenerationSettings, check_candidate
from safeforge.task.checks import CheckReport
from safeforge.task.files import METADATA, SAFETY_DOMAIN, SAFETY_PROBLEM


class MemoChecker:
    """The real execution check, computed once per distinct (domain, problem) text and its report
    reused for identical PDDL. A pickled copy (a worker process's) keeps the checks computed so far."""

    def __init__(self, settings: GenerationSettings):
        self.settings = settings
        self.done: dict[str, CheckReport] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"settings": self.settings, "done": self.done}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["settings"])  # type: ignore[misc]
        self.done = state["done"]

    def __call__(self, task_dir: Path) -> CheckReport:
        """Synchronous, as the real checker is: the pipeline runs it in the worker thread that wrote
        the candidate, so the memo adds no work to the event loop."""
        texts = b"".join((task_dir / name).read_bytes() for name in (SAFETY_DOMAIN, SAFETY_PROBLEM))
        key = hashlib.sha256(texts).hexdigest()
        with self._lock:
            if key not in self.done:
                self.done[key] = check_candidate(task_dir, self.settings.engine, self.settings.planner_time_limit)
        return copy.deepcopy(self.done[key])

    def warm(self, domain: str, problem: str) -> None:
        """Compute the check of this PDDL now, before anything is timed."""
        with tempfile.TemporaryDirectory(prefix="bench-warm-") as scratch:
            folder = Path(scratch) / "task"
            folder.mkdir()
            (folder / SAFETY_DOMAIN).write_text(domain.strip() + "\n", encoding="utf-8")
            (folder / SAFETY_PROBLEM).write_text(problem.strip() + "\n", encoding="utf-8")
            (folder / METADATA).write_text("{}\n", encoding="utf-8")
            report = self(folder)
        if not report.ok:
            raise SystemExit(f"the template task fails its check: {report.to_dict()}")
