"""Collecting accepted tasks and per-stage statistics from run folders (`outputs/<run>/`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline.publishing._errors import PublishError
from pipeline.run_ledger import RunStore

LLM_LEDGER = "llm.sqlite"
# (stage, state the stage starts from, state it passes to)
STAGES = (("extraction", "pending", "extracted"),
          ("checks", "extracted", "checked"),
          ("review", "in_review", "accepted"))


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
        return {"name": self.name, "path": str(self.root), "states": self.states,
                "stages": {k: {"decided": v.decided, "passed": v.passed} for k, v in self.stages.items()},
                "llm_cost_usd": self.llm_cost_usd, "llm_calls": self.llm_calls}


def open_run(path: str | Path) -> RunStore:
    """The run in `path`; PublishError if the folder has no run ledger (nothing is created)."""
    root = Path(path)
    if not (root / "ledger.sqlite").is_file():
        raise PublishError(f"{root}: not a run folder (no ledger.sqlite)")
    return RunStore(root)


def _stage_counts(store: RunStore) -> dict[str, StageCount]:
    counts = {name: StageCount() for name, _, _ in STAGES}
    for row in store.ledger.records():
        moves = {(t.from_state, t.to_state) for t in store.ledger.history(row.record_id)}
        for name, start, passed in STAGES:
            if any(f == start for f, _ in moves):
                counts[name].decided += 1
                counts[name].passed += (start, passed) in moves
    return counts


def _llm_usage(store: RunStore) -> tuple[float | None, int | None]:
    path = store.root / LLM_LEDGER
    if not path.is_file():
        return None, None
    from pipeline.llm import CallLedger

    ledger = CallLedger(path)
    try:
        stages = ledger.summary()
    finally:
        ledger.close()
    return sum(s.cost_usd for s in stages), sum(s.calls for s in stages)


def summarise_run(store: RunStore) -> RunSummary:
    cost, calls = _llm_usage(store)
    return RunSummary(store.name, store.root, store.ledger.counts(), _stage_counts(store), cost, calls)


def accepted_tasks(store: RunStore) -> list[AcceptedTask]:
    """The run's accepted tasks; PublishError naming the record when its task folder is missing."""
    found = []
    for row in store.ledger.records(state="accepted"):
        if not row.task_id:
            raise PublishError(f"run {store.name}: accepted record {row.record_id} has no task_id in the ledger")
        folder = store.task_dir(row.task_id)
        if not folder.is_dir():
            raise PublishError(f"run {store.name}: task {row.task_id} (record {row.record_id}) is accepted "
                               f"but its folder {folder} is missing")
        found.append(AcceptedTask(store.name, row.record_id, row.source, row.origin, row.task_id, folder))
    return found


def collect(run_paths: list[str | Path]) -> tuple[list[AcceptedTask], list[RunSummary]]:
    """Accepted tasks of every run, ordered by (task_id, run), and a summary of each run."""
    if not run_paths:
        raise PublishError("no runs given")
    tasks, summaries, names = [], [], {}
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
