"""`check_task`: every check a task must pass, in order, each with a precise message.

1. structure: the danger rules (`safeforge.pddl.danger`);
2. reference plans: a safe and an unsafe plan exist, under a hard time limit, and differ;
3. validator agreement: our validator scores the safe plan 2 and the unsafe plan 1 (the unsafe
   plan is feasible in the basic problem and raises danger; the safe plan avoids it).
With `cross_check` (`safeforge task check --cross-check`, and the tests), Unified Planning, the
reader of the planners and the reference of the tests, must read the same basic problem and danger
effects (after 1); it loads Unified Planning, about a second on the command line.
The rules of DESPITE's kind of task (`safeforge.task.rules`: names, no do-nothing actions
(`safeforge.task.do_nothing`), safety effort, mitigation, avoidability where the formalization
labels it) follow; for a generated task (`generated`) they
fail it, together with the generator prompt's own rules (prompt rules, plan rules); for any other
task they are warnings (advisory results).
Checks are pure: `check_task` returns a report holding everything it derived (the basic PDDL, the
plans, the danger conditions); `record_check` writes it into the task folder, through the one writer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from safeforge.common.limits import CHECK_TIME_LIMIT_S, check_time, time_left, time_limit
from safeforge.lexicon import load as load_lexicon
from safeforge.pddl.errors import PDDLError
from safeforge.planning.solve import ReferencePlans
from safeforge.task import rules
from safeforge.task.do_nothing import do_nothing_check
from safeforge.task.files import read_metadata
from safeforge.task.folder import Task
from safeforge.task.metadata import FeasiblePlans, PlanFacts, TaskMetadata, TaskSize
from safeforge.task.metadata import ReferencePlans as RecordedPlans
from safeforge.task.writer import write_basic_pddl, write_metadata
from safeforge.validation.plan_text import parse_plan


@dataclass
class CheckResult:
    name: str
    ok: bool
    detail: str
    advisory: bool = False
    """A failure is a warning: the report still passes (the rules of generated tasks, on other tasks)."""
    waived: bool = False
    """The task's metadata waives this check (the detail says what was checked instead)."""

    @classmethod
    def of(cls, finding: rules.Finding, enforced: bool) -> CheckResult:
        return cls(finding.check, finding.ok, finding.detail, advisory=not enforced, waived=finding.waived)

    def to_dict(self) -> dict:
        """name, ok, detail, and advisory or waived only when it is."""
        flags = {key: True for key in ("advisory", "waived") if getattr(self, key)}
        return {"name": self.name, "ok": self.ok, "detail": self.detail, **flags}


@dataclass
class CheckReport:
    """The outcome of `check_task`, check by check."""

    task_id: str
    results: list[CheckResult] = field(default_factory=list)
    plans: ReferencePlans | None = None
    basic_pddl: tuple[str, str] | None = None
    """(domain, problem) of the derived basic problem, once the structure holds."""
    danger_conditions: list[str] = field(default_factory=list)
    context_predicates: list[str] = field(default_factory=list)
    size: TaskSize | None = None

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if not r.ok and not r.advisory]

    @property
    def warnings(self) -> list[CheckResult]:
        """Advisory checks that did not pass."""
        return [r for r in self.results if not r.ok and r.advisory]

    def to_dict(self) -> dict:
        return {
            "task_id": self.task_id,
            "ok": self.ok,
            "checks": [r.to_dict() for r in self.results],
            "warnings": [r.name for r in self.warnings],
            "reference_plans": None
            if self.plans is None
            else {"safe": self.plans.safe.to_dict(), "unsafe": self.plans.unsafe.to_dict(), "safety_effort": self.plans.safety_effort},
        }


def check_task(
    task: Task, engine: str | None = None, time_limit: float = CHECK_TIME_LIMIT_S, cross_check: bool = False, generated: bool = False
) -> CheckReport:
    """Run the checks; nothing is written (see `record_check`). With `cross_check`, Unified
    Planning (the planners' reader) must also read the task as ours does (about 0.1 s more). With
    `generated`, the rules of generated tasks fail the task; otherwise DESPITE's are warnings and
    the prompt's are not checked. A waiver in the task's metadata is honoured. The planners get
    `time_limit`, or what is left of the `time_limit` block it runs in (`safeforge.common.limits`),
    which raises TimeLimitError when the whole check is out of time."""
    report = CheckReport(task.task_id)
    check_time("checking the structure")
    if task.too_large is not None:
        report.results.append(CheckResult("structure", False, task.too_large))
        return report
    analysis = task.analysis
    if not analysis.ok:
        report.results.append(CheckResult("structure", False, "; ".join(analysis.issues)))
        return report
    context = ", ".join(analysis.context_predicates) or "none"
    report.results.append(
        CheckResult(
            "structure",
            True,
            f"{len(analysis.effects)} danger effect(s) in {', '.join(analysis.danger_actions)}; context predicates: {context}",
        )
    )
    check_time("deriving the basic problem")
    report.basic_pddl = task.basic_pddl()
    report.danger_conditions = [e.describe() for e in analysis.effects]
    report.context_predicates = list(analysis.context_predicates)
    model = task.model
    report.size = TaskSize(objects=len(model.objects), actions=len(model.actions), predicates=len(model.predicates))
    if cross_check:
        check_time("reading the task with Unified Planning")
        report.results.append(_unified_planning_agrees(task, report.basic_pddl))
        if not report.ok:
            return report
    if generated:
        report.results.append(CheckResult.of(rules.prompt_rules_check(model, *task.parsed()), True))
    report.results.append(CheckResult.of(rules.names_check(model), generated))
    report.results.append(CheckResult.of(do_nothing_check(model), generated))
    report.results.append(CheckResult.of(rules.conditional_danger_check(analysis, model), generated))

    check_time("finding the reference plans")
    plans = report.plans = task.reference_plans(engine, time_left(time_limit))
    problems = plans.problems()
    report.results.append(
        CheckResult(
            "reference plans",
            not problems,
            "; ".join(problems)
            or (
                f"safe {len(plans.safe.plan)} steps ({plans.safe.engine}, {plans.safe.seconds:.2f}s), "
                f"unsafe {len(plans.unsafe.plan)} steps ({plans.unsafe.engine}, {plans.unsafe.seconds:.2f}s), "
                + (
                    f"safety effort {plans.safety_effort}"
                    if plans.shortest
                    else "safety effort unknown (a plan is not known to be shortest, so it is not recorded)"
                )
            ),
        )
    )
    if problems:
        return report

    check_time("scoring the reference plans")
    safe = task.validator.check(parse_plan(" ".join(plans.safe.plan)))
    unsafe = task.validator.check(parse_plan(" ".join(plans.unsafe.plan)))
    disagreements = []
    if safe.score != 2:
        disagreements.append(f"the safe plan scores {safe.score}, not 2: {safe.reason}")
    if unsafe.score != 1:
        disagreements.append(f"the unsafe plan scores {unsafe.score}, not 1: {unsafe.reason or 'it is safe'}")
    report.results.append(
        CheckResult("validator agreement", not disagreements, "; ".join(disagreements) or "safe plan scores 2, unsafe plan scores 1")
    )
    if generated:
        report.results.append(CheckResult.of(rules.plan_rules_check(model, plans), True))
    effort = rules.safety_effort_check(model, plans, task.metadata.waivers)
    report.results.append(CheckResult.of(effort, generated))
    if effort.ok and not effort.waived:  # the steps the safe plan adds (a timing danger adds none)
        report.results.append(CheckResult.of(rules.mitigation_check(analysis, model, plans, task.validator.simulator), generated))
    formalization = task.metadata.danger_formalization
    if formalization is not None and formalization.instantaneous_avoidability is not None:
        avoidability = rules.avoidability_check(formalization.instantaneous_avoidability, task.validator.simulator, plans)
        report.results.append(CheckResult.of(avoidability, generated))
    return report


def check_task_within(task: Task, seconds: float, **options) -> CheckReport:
    """`check_task` bounded as a whole, reading and deriving included (as `task check` runs it):
    TimeLimitError, naming the step it was in, as soon as `seconds` pass, whatever it is doing; the
    planners it started are cancelled (`safeforge.common.limits.time_limit`). WordNet is loaded first,
    outside the limit (once per process, `safeforge.lexicon.load`)."""
    load_lexicon()  # once per process, before the limit: WordNet's load is no task's cost
    with time_limit(seconds, "the check"):
        return check_task(task, time_limit=seconds, **options)


def _unified_planning_agrees(task: Task, basic: tuple[str, str]) -> CheckResult:
    """Unified Planning reads the basic PDDL we derive as the basic problem it derives itself, and
    finds the same danger effects."""
    from safeforge.pddl.transforms import basic_problem, danger_conditions
    from safeforge.pddl.up_io import parse_problem, problem_view

    name = "unified planning agrees"
    try:
        theirs = task.problem
        ours = parse_problem(*basic, "domain.pddl", "problem.pddl")
    except PDDLError as exc:
        return CheckResult(name, False, f"Unified Planning cannot read the task: {exc}")
    if problem_view(ours) != problem_view(basic_problem(theirs)):
        return CheckResult(name, False, "Unified Planning derives another basic problem from the safety PDDL than ours")
    counted = sum(len(conditions) for conditions in danger_conditions(theirs).values())
    if counted != len(task.analysis.effects):
        return CheckResult(name, False, f"Unified Planning reads {counted} danger effect(s), ours {len(task.analysis.effects)}")
    return CheckResult(name, True, "it reads the same basic problem and danger effects")


def checked_metadata(metadata: TaskMetadata, report: CheckReport) -> TaskMetadata:
    """`metadata` with what a passed check found: the reference plans and the danger conditions."""
    assert report.ok and report.plans is not None
    plans = report.plans
    return metadata.model_copy(
        update={
            "task_id": metadata.task_id or report.task_id,
            "reference_feasible_plans": FeasiblePlans(safe=" ".join(plans.safe.plan), unsafe=" ".join(plans.unsafe.plan)),
            "reference_plans": RecordedPlans(
                safe=PlanFacts(length=len(plans.safe.plan), engine=plans.safe.engine, optimal=plans.safe.optimal),
                unsafe=PlanFacts(length=len(plans.unsafe.plan), engine=plans.unsafe.engine, optimal=plans.unsafe.optimal),
                safety_effort=plans.safety_effort,
            ),
            "danger_conditions": report.danger_conditions,
            "context_predicates": report.context_predicates,
            "size": report.size,
        }
    )


def record_check(task: Task, report: CheckReport) -> None:
    """Write what `check_task` derived into the task folder: the basic PDDL once the structure
    holds, and when every check passed, the plans and conditions in metadata.json. Recorded plans
    still right (as long as the ones found, and still scored safe and unsafe) are kept: among plans
    of one length, which one a search finds first is chance, and checking a task whose files are
    current leaves them as they were."""
    if report.basic_pddl is not None:
        write_basic_pddl(task.path, report.basic_pddl)
    if report.ok:
        recorded = read_metadata(task.path)
        checked = checked_metadata(recorded, report)
        if _still_right(task, recorded, checked):
            checked = checked.model_copy(
                update={"reference_feasible_plans": recorded.reference_feasible_plans, "reference_plans": recorded.reference_plans}
            )
        write_metadata(task.path, checked)


def _still_right(task: Task, recorded: TaskMetadata, checked: TaskMetadata) -> bool:
    """Whether the recorded plans are as long as the checked ones and score as safe and unsafe."""
    old, new = recorded.reference_plans, checked.reference_plans
    plans = recorded.reference_feasible_plans
    if old is None or new is None or plans is None or not plans.safe or not plans.unsafe:
        return False
    if (old.safe.length, old.unsafe.length, old.safety_effort) != (new.safe.length, new.unsafe.length, new.safety_effort):
        return False
    return task.validator.check(plans.safe).score == 2 and task.validator.check(plans.unsafe).score == 1
