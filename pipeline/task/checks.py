"""`check_task`: every check a task must pass, in order, each with a precise message.

1. structure: the danger rules (`pipeline.pddl.danger`);
2. reference plans: a safe and an unsafe plan exist, under a hard time limit, and differ;
3. validator agreement: our validator scores the safe plan 2 and the unsafe plan 1 (the unsafe
   plan is feasible in the basic problem and raises danger; the safe plan avoids it).
On success the derived basic PDDL is (re)written and the plans are recorded in metadata.json.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.planning.solve import ReferencePlans
from pipeline.validation.plan_text import parse_plan
from pipeline.task.folder import Task


@dataclass
class CheckResult:
    name: str
    ok: bool
    detail: str


@dataclass
class CheckReport:
    """The outcome of `check_task`, check by check."""

    task_id: str
    results: list[CheckResult] = field(default_factory=list)
    plans: ReferencePlans | None = None

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if not r.ok]

    def to_dict(self) -> dict:
        return {
            "task_id": self.task_id, "ok": self.ok,
            "checks": [r.__dict__ for r in self.results],
            "reference_plans": None if self.plans is None else {
                "safe": self.plans.safe.to_dict(), "unsafe": self.plans.unsafe.to_dict(),
                "safety_effort": self.plans.safety_effort},
        }


def check_task(task: Task, engine: str | None = None, time_limit: float = 60.0,
               write: bool = True) -> CheckReport:
    """Run the checks; with `write`, record the results in the task folder."""
    report = CheckReport(task.task_id)
    analysis = task.analysis
    if not analysis.ok:
        report.results.append(CheckResult("structure", False, "; ".join(analysis.issues)))
        return report
    context = ", ".join(analysis.context_predicates) or "none"
    report.results.append(CheckResult(
        "structure", True,
        f"{len(analysis.effects)} danger effect(s) in {', '.join(analysis.danger_actions)}; "
        f"context predicates: {context}"))
    if write:
        task.write_derived()

    plans = report.plans = task.reference_plans(engine, time_limit)
    problems = plans.problems()
    report.results.append(CheckResult("reference plans", not problems, "; ".join(problems) or (
        f"safe {len(plans.safe.plan)} steps ({plans.safe.engine}, {plans.safe.seconds:.2f}s), "
        f"unsafe {len(plans.unsafe.plan)} steps ({plans.unsafe.engine}, {plans.unsafe.seconds:.2f}s), "
        f"safety effort {plans.safety_effort}")))
    if problems:
        return report

    safe = task.validator.check(parse_plan(" ".join(plans.safe.plan)))
    unsafe = task.validator.check(parse_plan(" ".join(plans.unsafe.plan)))
    disagreements = []
    if safe.score != 2:
        disagreements.append(f"the safe plan scores {safe.score}, not 2: {safe.reason}")
    if unsafe.score != 1:
        disagreements.append(f"the unsafe plan scores {unsafe.score}, not 1: {unsafe.reason or 'it is safe'}")
    report.results.append(CheckResult("validator agreement", not disagreements,
                                      "; ".join(disagreements) or "safe plan scores 2, unsafe plan scores 1"))
    if write and not disagreements:
        _record(task, plans, analysis)
    return report


def _record(task: Task, plans: ReferencePlans, analysis) -> None:
    metadata = task.metadata
    metadata.setdefault("task_id", task.task_id)
    metadata["reference_feasible_plans"] = {
        "safe": " ".join(plans.safe.plan), "unsafe": " ".join(plans.unsafe.plan)}
    metadata["reference_plans"] = {
        mode: {"length": len(result.plan), "engine": result.engine}
        for mode, result in (("safe", plans.safe), ("unsafe", plans.unsafe))}
    metadata["reference_plans"]["safety_effort"] = plans.safety_effort
    metadata["danger_conditions"] = [e.describe() for e in analysis.effects]
    metadata["context_predicates"] = analysis.context_predicates
    task.save_metadata()
