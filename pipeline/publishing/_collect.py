"""Collecting the tasks a release is made of, from three kinds of folder:

- a run (`outputs/<run>/`, it holds ledger.sqlite): its records in state `accepted`;
- the output of `safeforge import-despite` (task folders and import_report.jsonl): the tasks the
  report says were imported cleanly (a mismatch or failure is left out, with its reason);
- a folder of task folders (hand-written ones, e.g. examples/tasks): every task folder in it.

Each task's origin (how it was made, its dataset, its LLM endpoint: `_origin`) is read from its
metadata; a folder whose metadata cannot be read is still collected, and re-validation refuses it
with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from safeforge.despite_import import IMPORTED
from safeforge.despite_import import REPORT as IMPORT_REPORT
from safeforge.publishing._errors import PublishError
from safeforge.publishing._origin import TaskOrigin, task_origin
from safeforge.runs.ledger import RecordRow, RunStore
from safeforge.runs.overview import run_overview
from safeforge.task.files import SAFETY_DOMAIN, TaskError, read_metadata
from safeforge.task.metadata import TaskMetadata

STAGES = ("extract", "checks", "review")  # the stage funnels of safeforge.runs.overview
RUN, DESPITE_IMPORT, TASK_FOLDER = "run", "despite import", "task folder"


@dataclass(frozen=True)
class AcceptedTask:
    """A task to release: where it was collected from, its record and folder, and its origin."""

    collection: str  # the name of the run or folder it was collected from
    record_id: str
    origin_text: str  # where its record came from (dataset, file relative to it, row)
    task_id: str
    folder: Path
    origin: TaskOrigin

    @property
    def source(self) -> str:
        return self.origin.source


@dataclass
class StageCount:
    """Records a stage decided on, and how many it passed."""

    decided: int = 0
    passed: int = 0

    @property
    def rate(self) -> float | None:
        return self.passed / self.decided if self.decided else None


@dataclass
class InputSummary:
    """One folder a release is built from, in numbers: a run's ledger and LLM cost, or the tasks a
    folder holds (and those left out)."""

    name: str
    kind: str  # run | despite import | task folder
    states: dict[str, int] = field(default_factory=dict)
    stages: dict[str, StageCount] = field(default_factory=dict)
    llm_cost_usd: float | None = None  # None: no LLM ledger
    llm_calls: int | None = None
    left_out: dict[str, str] = field(default_factory=dict)  # task_id -> why it is not released

    def to_dict(self) -> dict:
        return {
            "name": self.name,  # the folder's name only: no path of the machine that built the release
            "kind": self.kind,
            "states": self.states,
            "stages": {k: {"decided": v.decided, "passed": v.passed} for k, v in self.stages.items()},
            "llm_cost_usd": self.llm_cost_usd,
            "llm_calls": self.llm_calls,
            "left_out": self.left_out,
        }


def _metadata(folder: Path) -> TaskMetadata:
    try:
        return read_metadata(folder)
    except TaskError:
        return TaskMetadata()  # re-validation reports why the folder cannot be read


def _task(collection: str, folder: Path, task_id: str, ledger_row: RecordRow | None = None) -> AcceptedTask:
    """The task in `folder`; `ledger_row` is its record's row when it comes from a run."""
    metadata = _metadata(folder)
    provenance = metadata.provenance
    return AcceptedTask(
        collection,
        (ledger_row.record_id if ledger_row else None) or provenance.record_id or task_id,
        provenance.origin or (ledger_row.origin if ledger_row else ""),
        task_id,
        folder,
        task_origin(metadata, task_id, ledger_row.source if ledger_row else None),
    )


# -- runs ---------------------------------------------------------------------------------------
def summarise_run(store: RunStore) -> InputSummary:
    """The run's stage funnels and LLM cost, as `safeforge runs show` computes them."""
    overview = run_overview(store.root, tasks=False, ledger=store.ledger)
    stages = {f.stage: StageCount(decided=f.passed + f.rejected + f.errors, passed=f.passed) for f in overview.stages}
    summary = InputSummary(store.name, RUN, overview.states, stages)
    if store.llm_db.is_file():  # hand-written tasks have no LLM ledger: cost unknown rather than 0
        # a call without a known price (replayed, or unpriced) leaves the run's cost unknown
        summary.llm_cost_usd = None if overview.cost.unpriced_calls else overview.cost.cost_usd
        summary.llm_calls = overview.cost.calls
    return summary


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
        found.append(_task(store.name, folder, row.task_id, row))
    return found


# -- folders of tasks ---------------------------------------------------------------------------
def _import_outcomes(report: Path) -> dict[str, tuple[str, str]]:
    """task_id -> (outcome, reason) from an import report (the last line of a task wins)."""
    outcomes = {}
    for number, line in enumerate(report.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            outcomes[str(entry["task_id"])] = (str(entry["outcome"]), str(entry.get("reason") or ""))
        except (ValueError, KeyError, TypeError):
            raise PublishError(f"{report}:{number}: not a line of an import report (JSON with task_id and outcome)") from None
    return outcomes


def _collect_folder(root: Path) -> tuple[list[AcceptedTask], InputSummary]:
    folders = sorted(p for p in root.iterdir() if (p / SAFETY_DOMAIN).is_file()) if root.is_dir() else []
    report = root / IMPORT_REPORT
    if not folders and not report.is_file():
        raise PublishError(
            f"{root}: not a run (no ledger.sqlite), an import-despite output ({IMPORT_REPORT}) or a folder of task folders "
            f"(none of its folders holds {SAFETY_DOMAIN})"
        )
    if not report.is_file():
        tasks = [_task(root.name, folder, folder.name) for folder in folders]
        return tasks, InputSummary(root.name, TASK_FOLDER, {"tasks": len(tasks)})
    outcomes = _import_outcomes(report)
    summary = InputSummary(root.name, DESPITE_IMPORT)
    tasks = []
    for folder in folders:
        outcome, reason = outcomes.get(folder.name, ("not in the import report", ""))
        summary.states[outcome] = summary.states.get(outcome, 0) + 1
        if outcome == IMPORTED:
            tasks.append(_task(root.name, folder, folder.name))
        else:
            summary.left_out[folder.name] = f"{outcome}: {reason}" if reason else outcome
    return tasks, summary


def collect(paths: list[str | Path], runs: Mapping[Path, RunStore]) -> tuple[list[AcceptedTask], list[InputSummary]]:
    """Tasks to release from every folder (`runs`: the open store of each that is a run), ordered by
    (task_id, collection), and a summary of each folder; PublishError for a folder that is none of the
    three kinds (nothing is created)."""
    if not paths:
        raise PublishError("no runs or task folders given")
    tasks: list[AcceptedTask] = []
    summaries: list[InputSummary] = []
    names: dict[str, Path] = {}
    for path in map(Path, paths):
        if not path.is_dir():
            raise PublishError(f"{path}: no such folder (give a run, an import-despite output or a folder of task folders)")
        if path.name in names:
            raise PublishError(f"two folders are named {path.name}: {names[path.name]} and {path}")
        names[path.name] = path
        store = runs.get(path)
        found, summary = (accepted_tasks(store), summarise_run(store)) if store is not None else _collect_folder(path)
        tasks += found
        summaries.append(summary)
    return sorted(tasks, key=lambda t: (t.task_id, t.collection)), summaries
