"""Everything the task page shows about one version of a task's safety PDDL (saved or being edited).

`analyse` reads the text in memory (nothing is written) and gives the diagnostics of the check
with the file and line each belongs to, the basic problem the evaluated model sees, the danger
rules it does not see, the reference plans as state traces and the SPOC file. Without a check
report it costs milliseconds (reading, the structure check, the traces of the recorded plans);
with one (`run_check`, which runs the planners) it also has the check's results and plans.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from safeforge.common.limits import TimeLimitError
from safeforge.pddl.errors import PDDLError
from safeforge.pddl.sexpr import to_text
from safeforge.review import condition_in_words
from safeforge.spoc import NotExportable, export_task
from safeforge.task import (
    CheckReport,
    CheckResult,
    Diagnostic,
    Task,
    TaskError,
    TaskMetadata,
    check_task_within,
    checked_metadata,
    diagnose,
    read_problems,
)
from safeforge.validation import Trace, trace_plan
from safeforge.workbench._pages import live_sections
from safeforge.workbench._states import StepState, states

PlanOrigin = Literal["recorded", "check"]


@dataclass
class DangerRule:
    """One `(when <condition> (increase (danger) 1))` of the safety domain."""

    action: str
    condition: str
    in_words: str
    line: int


@dataclass
class PlanView:
    """A reference plan and its state trace (or why it has none)."""

    kind: Literal["safe", "unsafe"]
    origin: PlanOrigin
    text: str = ""
    trace: Trace | None = None
    problem: str = ""
    states: list[StepState] = field(default_factory=list)
    """The whole state after each step (the initial state first)."""


@dataclass
class SpocView:
    """The SPOC goal-condition file the task would export, or why it would not."""

    file_name: str | None = None
    document: str | None = None
    warnings: list[str] = field(default_factory=list)
    reason: str | None = None


@dataclass
class Analysis:
    task: Task | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    checks: list[CheckResult] | None = None
    """The check's results (None: the full check has not run on this text)."""
    basic: tuple[str, str] | None = None
    rules: list[DangerRule] = field(default_factory=list)
    context_predicates: list[str] = field(default_factory=list)
    plans: list[PlanView] = field(default_factory=list)
    spoc: SpocView | None = None

    @property
    def side_by_side(self) -> list[tuple[str, str]] | None:
        """The safe and unsafe plans' steps, row by row (None unless both are traced)."""
        traced = [plan.trace for plan in self.plans if plan.trace is not None]
        if len(traced) != 2:
            return None
        safe, unsafe = ([step.text for step in trace.steps] for trace in traced)
        rows = max(len(safe), len(unsafe))
        return [(safe[i] if i < len(safe) else "", unsafe[i] if i < len(unsafe) else "") for i in range(rows)]

    @property
    def first_difference(self) -> int | None:
        """The first step (from 1) where the safe and unsafe plans part."""
        rows = self.side_by_side or []
        return next((number for number, (safe, unsafe) in enumerate(rows, start=1) if safe != unsafe), None)

    @property
    def ok(self) -> bool | None:
        """Whether the check passes (None: it has not run, and nothing found so far says it fails);
        it passes with warnings when only advisory rules fail (see `warnings`)."""
        if any(d.severity == "error" for d in self.diagnostics):
            return False
        return None if self.checks is None else all(c.ok or c.advisory for c in self.checks)

    @property
    def warnings(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)


TIME_LIMIT_CHECK = "time limit"


def run_check(task: Task, time_limit: float, cross_check: bool = False) -> CheckReport:
    """The check of `safeforge task check` (with `cross_check`, Unified Planning's reading compared
    too) on a task in memory, within `time_limit` in all: a check out of time fails its "time limit"
    line. PDDLError or TaskError when the text cannot be read at all."""
    try:
        return check_task_within(task, time_limit, cross_check=cross_check)
    except TimeLimitError as exc:
        return CheckReport(task.task_id, [CheckResult(TIME_LIMIT_CHECK, False, str(exc))])


def analyse(task: Task, *, saved: bool, report: CheckReport | None = None, with_spoc: bool = False) -> Analysis:
    """What the page shows for `task`; `saved`: its text is the folder's (then the recorded plans
    and the derived files on disk are what it shows)."""
    if report is not None and (late := [r for r in report.failed if r.name == TIME_LIMIT_CHECK]):  # not read again, unbounded
        return Analysis(None, [Diagnostic(late[0].name, late[0].detail)], checks=report.results)
    if problems := read_problems(task):
        return Analysis(None, problems)
    analysis = Analysis(task, diagnose(task, report))
    structure = task.analysis
    analysis.rules = [
        DangerRule(e.action, to_text(e.condition), condition_in_words(to_text(e.condition)), e.line) for e in structure.effects
    ]
    analysis.context_predicates = list(structure.context_predicates)
    if structure.ok:
        analysis.basic = _shown(task, analysis) if saved else task.basic_pddl()
    if report is not None:
        analysis.checks = report.results
    metadata = _plans_metadata(task, saved, report)
    recorded = saved and task.metadata.reference_feasible_plans is not None
    if report is not None and not report.ok and not recorded:
        analysis.plans = _searched(task, report)
    else:
        analysis.plans = _plans(task, metadata, "recorded" if metadata is task.metadata else "check")
    for view in analysis.plans:
        if view.trace is not None:
            view.states = states(view.trace, analysis.rules)
    if with_spoc:
        analysis.spoc = _spoc(task, metadata, report)
    return analysis


def _shown(task: Task, analysis: Analysis) -> tuple[str, str]:
    """The folder's derived basic PDDL (what DESPITE reads), or derived now when it cannot be read."""
    try:
        return task.shown_pddl()
    except TaskError as exc:
        analysis.diagnostics.append(Diagnostic("read", str(exc), severity="warning"))
        return task.basic_pddl()


def _plans_metadata(task: Task, saved: bool, report: CheckReport | None) -> TaskMetadata:
    """The metadata whose reference plans the page shows: the recorded ones while the text is the
    saved one, else (or when none are recorded) the ones a passing check found."""
    if saved and task.metadata.reference_feasible_plans is not None:
        return task.metadata
    if report is not None and report.ok:
        return checked_metadata(task.metadata, report)
    return task.metadata if saved else task.metadata.model_copy(update={"reference_feasible_plans": None})


def _plans(task: Task, metadata: TaskMetadata, origin: PlanOrigin) -> list[PlanView]:
    plans = metadata.reference_feasible_plans
    views = []
    for kind in ("safe", "unsafe"):
        view = PlanView(kind, origin)
        if plans is None:
            view.problem = f"no {kind} reference plan: " + (
                "metadata.json records none and the check has not found one yet" if origin == "recorded" else "the check found none"
            )
        else:
            view.text = plans.safe if kind == "safe" else plans.unsafe
            view.trace = trace_plan(task.validator, view.text)
        views.append(view)
    return views


def _searched(task: Task, report: CheckReport) -> list[PlanView]:
    """The plans a failing check looked for: each one found, with its trace; for one not found,
    what the search established (none exists only when the planner proved it)."""
    views = []
    for kind in ("safe", "unsafe"):
        view = PlanView(kind, "check")
        result = None if report.plans is None else (report.plans.safe if kind == "safe" else report.plans.unsafe)
        if result is None:
            view.problem = f"no {kind} plan looked for: the check stopped before the planners ({', '.join(r.name for r in report.failed)})"
        elif result.solved:
            view.text = " ".join(result.plan)
            view.trace = trace_plan(task.validator, view.text)
        elif result.status == "no_plan":
            view.problem = f"no {kind} plan exists: the planner's search ({result.engine}) proved there is none"
        elif result.status == "timeout":
            view.problem = f"no {kind} plan found within the time limit ({result.engine}); one may exist"
        else:
            why = f": {result.message}" if result.message else ""
            view.problem = f"no {kind} plan found: the planner's answer is {result.status} ({result.engine}{why})"
        views.append(view)
    return views


def _spoc(task: Task, metadata: TaskMetadata, report: CheckReport | None) -> SpocView:
    if metadata.reference_feasible_plans is None:
        return SpocView(reason="the task has no reference plans yet (the check must pass first)")
    if report is not None and not report.ok:
        return SpocView(reason="the check fails: only a checked task is exported")
    try:
        document, stem, warnings = export_task(Task(task.path, task.safety_domain, task.safety_problem, metadata))
    except NotExportable as exc:
        return SpocView(reason=str(exc))
    except (PDDLError, TaskError) as exc:
        return SpocView(reason=f"the task cannot be read for SPOC: {exc}")
    return SpocView(f"{stem}_00000.json", json.dumps(document, indent=2), warnings)


def answer(analysis: Analysis) -> dict:
    """The JSON answer of a check: whether it passes, its diagnostics and the sections it changes, as HTML."""
    return {
        "ok": analysis.ok,
        "warnings": analysis.warnings,
        "diagnostics": [d.to_dict() for d in analysis.diagnostics],
        "html": live_sections(analysis=analysis),
    }
