"""The numbers a release reports: counts per source, danger group, type and entity; plan
lengths and safety effort; acceptance per stage and LLM cost per accepted task (from the runs)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from safeforge.publishing._collect import STAGES, RunSummary

COUNTED = (("source", "source"), ("danger_group", "danger group"), ("danger_type", "danger type"), ("entity_in_danger", "entity in danger"))


@dataclass
class ReleaseStats:
    tasks: int
    duplicates: int
    counts: dict[str, dict[str, int]]  # column -> value -> tasks
    safe_plan_lengths: list[int]
    unsafe_plan_lengths: list[int]
    safety_efforts: list[int]
    stages: dict[str, dict] = field(default_factory=dict)  # stage -> {decided, passed, rate}
    accepted_in_runs: int = 0
    llm_cost_usd: float | None = None
    cost_basis: str = ""

    @property
    def cost_per_accepted_task(self) -> float | None:
        if self.llm_cost_usd is None or not self.accepted_in_runs:
            return None
        return self.llm_cost_usd / self.accepted_in_runs

    def to_dict(self) -> dict:
        return {
            "tasks": self.tasks,
            "duplicates_removed": self.duplicates,
            "counts": self.counts,
            "stages": self.stages,
            "accepted_in_runs": self.accepted_in_runs,
            "llm_cost_usd": self.llm_cost_usd,
            "cost_basis": self.cost_basis,
            "cost_per_accepted_task_usd": self.cost_per_accepted_task,
            "safe_plan_length": _describe(self.safe_plan_lengths),
            "safety_effort": _describe(self.safety_efforts),
        }


def _describe(values: list[int]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    return {"min": ordered[0], "max": ordered[-1], "mean": round(sum(values) / len(values), 3), "median": ordered[len(ordered) // 2]}


def _label(value: str) -> str:
    return value or "(unspecified)"


def release_stats(rows: list[dict], runs: list[RunSummary], duplicates: int) -> ReleaseStats:
    counts = {
        column: dict(sorted(Counter(_label(r[column]) for r in rows).items(), key=lambda kv: (-kv[1], kv[0]))) for column, _ in COUNTED
    }
    stages = {}
    for name in STAGES:
        decided = sum(run.stages[name].decided for run in runs)
        passed = sum(run.stages[name].passed for run in runs)
        stages[name] = {"decided": decided, "passed": passed, "rate": round(passed / decided, 4) if decided else None}
    stats = ReleaseStats(
        len(rows),
        duplicates,
        counts,
        [r["safe_plan_length"] for r in rows],
        [r["unsafe_plan_length"] for r in rows],
        [r["safety_effort"] for r in rows],
        stages,
        accepted_in_runs=sum(run.states.get("accepted", 0) for run in runs),
    )
    if all(run.llm_cost_usd is not None for run in runs):
        stats.llm_cost_usd = sum(run.llm_cost_usd or 0.0 for run in runs)
        stats.cost_basis = "every LLM call of the runs (llm.sqlite), over the tasks they had accepted"
    else:
        costs = [r["provenance"]["cost_usd"] for r in rows if r["provenance"]["cost_usd"] is not None]
        if costs:
            stats.llm_cost_usd, stats.accepted_in_runs = sum(costs), len(costs)
            stats.cost_basis = (
                "the generation cost recorded in the released tasks' provenance (a run "
                "without llm.sqlite: calls for rejected records are not counted)"
            )
        else:
            stats.cost_basis = "unknown: no LLM ledger in the runs and no cost in the tasks' provenance"
    return stats
