"""Collecting accepted tasks and per-stage statistics from run folders (`outputs/<run>/`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from safeforge.publishing._errors import PublishError
from safeforge.runs.ledger import RunStore
from safeforge.runs.overview import is_run, run_overview

STAGES = ("extract", "checks", "review")  # the stage funnels of safeforge.runs.overview


@dataclass(frozen=True)
class AcceptedTask:
    """A ledger row in state `accepted` and its task folder."""

    run: str
    record_id: str
    source: str
    origin: str
    task_id: str
    folder: Path


@dataclass
class StageCount:
    """Records a stage decided on, and how many it passed."""

    decided: int = 0
    passed: int = 0

    @property
    def rate(self) -> float | None:
        return self.passed / self.decided if self.decided else None


@dataclass
class RunSummary:
    """One run's ledger in numbers, and what its LLM calls cost."""

    name: str
    root: Path
    states: dict[str, int] = field(default_factory=dict)
    stages: dict[str, StageCount] = field(default_factory=dict)
    llm_cost_usd: float | None = None  # None: the run has no LLM ledger
    llm_calls: int | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,  # the run's name only: no path of the machine that built the release
            "states": self.states,
            "stages": {k: {"decided": v.decided, "passed": v.passed} for k, v in self.stages.items()},
            "llm_cost_usd": self.llm_cost_usd,
            "llm_calls": self.llm_calls,
        }


def open_run(path: str | Path) -> RunStore:
    """The run in `path`; PublishError if the folder has no run ledger (nothing is created)."""
    root = Path(path)
    if not is_run(root):
        raise PublishError(f"{root}: not a run folder (no ledger.sqlite)")
    return RunStore(root)


def summarise_run(store: RunStore) -> RunSummary:
    """The run's stage funnels and LLM cost, as `safeforge runs show` computes them."""
    overview = run_overview(store.root)
    stages = {f.stage: StageCount(decided=f.passed + f.rejected + f.errors, passed=f.passed) for f in overview.stages}
    if not store.llm_db.is_file():  # hand-written tasks: no LLM ledger, cost unknown rather than 0
        return RunSummary(store.name, store.root, overview.states, stages)
    return RunSummary(store.name, store.root, overview.states, stages, overview.cost.cost_usd, overview.cost.calls)


def accepted_tasks(store: RunStore) -> list[AcceptedTask]:
    """The run's accepted tasks; PublishError naming the record when its task folder is missing."""
    found = []
    for row in store.ledger.records(state="accepted"):
        if not row.task_id:
            raise PublishError(f"run {store.name}: accepted record {row.record_id} has no task_id in the ledger")
        folder = store.task_dir(row.task_id)
        if not folder.is_dir():
            raise PublishError(
                f"run {store.name}: task {row.task_id} (record {row.record_id}) is accepted but its folder {folder} is missing"
            )
        found.append(AcceptedTask(store.name, row.record_id, row.source, row.origin, row.task_id, folder))
    return found


def collect(run_paths: list[str | Path]) -> tuple[list[AcceptedTask], list[RunSummary]]:
    """Accepted tasks of every run, ordered by (task_id, run), and a summary of each run."""
    if not run_paths:
        raise PublishError("no runs given")
    tasks: list = []
    summaries: list = []
    names: dict = {}
    for path in run_paths:
        store = open_run(path)
        if store.name in names:
            raise PublishError(f"two runs are named {store.name}: {names[store.name]} and {store.root}")
        names[store.name] = store.root
        try:
            tasks += accepted_tasks(store)
            summaries.append(summarise_run(store))
        finally:
            store.ledger.close()
    return sorted(tasks, key=lambda t: (t.task_id, t.run)), summaries
