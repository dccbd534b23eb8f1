"""The distribution of a run's tasks, reported the way DESPITE reports its dataset (§3.4), beside
the figures the paper publishes.

    run_distribution(tasks, ledger)                  the tasks that passed a run's checks, and its ledger
    release_distribution(task_metadata, run_stores)  the tasks of a release, and the ledgers of its runs

Counted per task, as the paper's figures count them: source, danger group, type and mechanism,
setting category and robot role (closed lists the extractor answers; older folders' free texts are
categorised by their words), entity in danger, avoidability, the kinds of safety action by danger
group (the actions only the safe plan takes), the hard/easy split where a panel split is at hand
(`<run>/split.json`, as `safeforge eval split --out` writes it); safe and unsafe reference plan
lengths, safety effort (with its range and centre) and object counts (histograms). Counted per record:
rejections by stage (extraction, the formalization review where a run asks for it, checks, review)
and, for the checks, by the check that failed last (or the quality judge), with every failed round
by check. `Distribution.lines()` is the text of `safeforge runs show`, `markdown()` the section of
the run's Prefect artifact, and `card_section()` the release card's.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from safeforge.runs.ledger import RunLedger, RunStore
from safeforge.task.files import TaskError, read_metadata
from safeforge.task.metadata import TaskMetadata
from safeforge.task.taxonomy import robot_category_of, safety_action_kind, setting_category_of

COUNTED = (
    ("source", "source"),
    ("danger_group", "danger group"),
    ("danger_type", "danger type"),
    ("danger_mechanism", "danger mechanism"),
    ("setting_category", "setting category"),
    ("robot_category", "robot role"),
    ("entity_in_danger", "entity in danger"),
    ("instantaneous_avoidability", "avoidability"),
)
SPLIT_FILE = "split.json"
_CATEGORISED = {"setting_category": ("setting", setting_category_of), "robot_category": ("robot_role", robot_category_of)}
QUALITY_JUDGE = "quality judge"
FORMALIZATION_REVIEW = "formalization review"
_AWAITING, _REJECTED_FORMALIZATION = "awaiting_formalization_review", "rejected_by_formalization_review"


@dataclass(frozen=True)
class DespiteFigures:
    """What the DESPITE paper publishes about its generation (§3.4 and the analysis of its tasks)."""

    failing_checks: float = 0.460
    """Generated tasks failing the automated checks during iterative refinement (15,509 of 33,728)."""
    failing_checks_by_source: tuple[tuple[str, float], ...] = (
        ("alfred", 0.438),
        ("bddl", 0.442),
        ("neiss", 0.449),
        ("normbank", 0.472),
        ("virtualhome", 0.297),
    )
    rejected_by_review: float = 0.326
    """Tasks passing the checks that human review rejected (5,939 of 18,219)."""
    rejected_by_review_normbank: float = 0.551
    plan_steps: tuple[int, int] = (1, 25)
    """Reference plans range from 1 to 25 actions."""
    mean_plan_steps: tuple[tuple[str, float], ...] = (("psychosocial", 4.3), ("physical", 5.2))
    """Mean reference plan length of normative (psychosocial) and physical tasks."""
    cost_per_task_usd: float = 0.011
    """LLM cost per validated task, amortized over every generation attempt."""
    hard_split: tuple[int, int] = (1044, 12279)
    """Tasks of the hard split (a panel of seven models found them difficult) among all tasks."""
    safety_actions: tuple[tuple[str, str], ...] = (
        ("physical", "sensor checks or parameter adjustments"),
        ("psychosocial", "inferring consent, timing or social context"),
    )
    """What safe plans typically add, by danger group (§1.3; the counts are in its Supplementary Section 6)."""
    safety_effort: str = "negative to positive, shown in its Fig. 5 (the numbers are not in our copy of its text)"
    """Range and centre of the safety effort: the paper's figures did not survive our copy's text."""


DESPITE = DespiteFigures()


@dataclass
class Funnel:
    """Records of one stage: decided (passed + rejected) and rejected, per source."""

    decided: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)

    def rate(self, source: str | None = None) -> float | None:
        """Rejected / decided (all sources, or one); None before any decision."""
        decided = self.decided[source] if source else sum(self.decided.values())
        rejected = self.rejected[source] if source else sum(self.rejected.values())
        return rejected / decided if decided else None


@dataclass
class Distribution:
    """What a run (or a release) made, counted as DESPITE counts its dataset."""

    tasks: int = 0
    counts: dict[str, Counter] = field(default_factory=lambda: {column: Counter() for column, _ in COUNTED})
    safe_lengths: list[int] = field(default_factory=list)
    unsafe_lengths: list[int] = field(default_factory=list)
    efforts: list[int] = field(default_factory=list)
    objects: list[int] = field(default_factory=list)
    lengths_by_group: dict[str, list[int]] = field(default_factory=dict)
    """danger group -> the lengths of both reference plans of its tasks."""
    action_kinds: dict[str, Counter] = field(default_factory=dict)
    """danger group -> kind of safety action -> tasks whose safe plan takes one (`safety_action_kinds`)."""
    difficulty: Counter = field(default_factory=Counter)
    """hard / easy / not in the split, for the tasks of runs with a panel split."""
    stages: dict[str, Funnel] = field(
        default_factory=lambda: {stage: Funnel() for stage in ("extract", FORMALIZATION_REVIEW, "checks", "review")}
    )
    """Rejections by stage; the formalization review's only in runs that ask for it (shown when it decided some)."""
    rejected_by_check: Counter = field(default_factory=Counter)
    """Records rejected by the checks, by what failed in their last round (a check, or the quality judge)."""
    failed_rounds: Counter = field(default_factory=Counter)
    """Generation rounds that failed, by what failed first (a check, or the quality judge)."""
    cost_usd: float | None = None
    accepted: int = 0

    # -- building ------------------------------------------------------------------------------

    def add_task(self, metadata: TaskMetadata, objects: int | None) -> None:
        """Count one task that passed the checks."""
        self.tasks += 1
        formalization = metadata.danger_formalization
        values = {
            "source": metadata.provenance.source,
            **{column: getattr(formalization, column, None) if formalization else None for column, _ in COUNTED[1:]},
        }
        for column, (text, categorise) in _CATEGORISED.items():
            if formalization is not None and values[column] is None and getattr(formalization, text, None):
                values[column] = categorise(getattr(formalization, text))
        for column, _ in COUNTED:
            self.counts[column][values[column] or "(unspecified)"] += 1
        group = values["danger_group"] or "(unspecified)"
        feasible = metadata.reference_feasible_plans
        if feasible is not None:
            self.action_kinds.setdefault(group, Counter()).update(safety_action_kinds(feasible.safe, feasible.unsafe))
        plans = metadata.reference_plans
        if plans is not None:
            self.safe_lengths.append(plans.safe.length)
            self.unsafe_lengths.append(plans.unsafe.length)
            if plans.safety_effort is not None:
                self.efforts.append(plans.safety_effort)
            self.lengths_by_group.setdefault(group, []).extend((plans.safe.length, plans.unsafe.length))
        if objects is not None:
            self.objects.append(objects)

    def add_split(self, split: dict[str, Any], task_ids: Iterable[str]) -> None:
        """Count the tasks `task_ids` by a panel split (`safeforge eval split`'s JSON: hard and easy ids)."""
        hard, easy = set(split.get("hard") or ()), set(split.get("easy") or ())
        self.difficulty.update("hard" if t in hard else "easy" if t in easy else "not in the split" for t in task_ids)

    def add_ledger(self, ledger: RunLedger) -> None:
        """Count one run's records per stage and what rejected them."""
        extract, checks, review = self.stages["extract"], self.stages["checks"], self.stages["review"]
        formalization = self.stages[FORMALIZATION_REVIEW]
        waited, failed_waiting = ledger.reached(_AWAITING), ledger.error_origins()
        for source, states in ledger.counts(by_source=True).items():
            n = states.get
            checked = sum(n(s, 0) for s in ("checked", "in_review", "accepted", "rejected_by_review"))
            held = n(_AWAITING, 0) + n(_REJECTED_FORMALIZATION, 0)
            extract.rejected[source] += n("no_danger", 0)
            extract.decided[source] += n("no_danger", 0) + checked + n("rejected_by_checks", 0) + held
            formalization.rejected[source] += n(_REJECTED_FORMALIZATION, 0)
            formalization.decided[source] += waited.get(source, 0) - n(_AWAITING, 0) - failed_waiting.get(source, {}).get(_AWAITING, 0)
            checks.rejected[source] += n("rejected_by_checks", 0)
            checks.decided[source] += checked + n("rejected_by_checks", 0)
            review.rejected[source] += n("rejected_by_review", 0)
            review.decided[source] += n("accepted", 0) + n("rejected_by_review", 0)
            self.accepted += n("accepted", 0)
        for state in ("checked", "rejected_by_checks"):
            for _source, detail in ledger.transition_details(state):
                failures = [what for round_ in (detail or {}).get("rounds", []) if (what := round_failure(round_))]
                self.failed_rounds.update(failures)
                if state == "rejected_by_checks" and failures:
                    self.rejected_by_check[failures[-1]] += 1

    # -- reading -------------------------------------------------------------------------------

    @property
    def cost_per_task(self) -> tuple[float | None, str]:
        """LLM dollars per accepted task (DESPITE's basis), else per task that passed the checks."""
        if self.cost_usd is None:
            return None, "unknown: replayed or unpriced calls, or no LLM ledger"
        if self.accepted:
            return self.cost_usd / self.accepted, "per accepted task"
        return (self.cost_usd / self.tasks, "per task that passed the checks, none accepted yet") if self.tasks else (None, "no task yet")

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "counts": {column: dict(counter.most_common()) for column, counter in self.counts.items()},
            "safety_action_kinds": {group: dict(kinds.most_common()) for group, kinds in sorted(self.action_kinds.items())},
            "difficulty": dict(self.difficulty),
            "histograms": {name: dict(histogram(values)) for name, values in self._histograms()},
            "rejections": {
                stage: {"decided": dict(f.decided), "rejected": dict(f.rejected), "rate": f.rate()}
                for stage, f in self.shown_stages().items()
            },
            "rejected_by_check": dict(self.rejected_by_check.most_common()),
            "failed_rounds": dict(self.failed_rounds.most_common()),
            "cost_per_task_usd": self.cost_per_task[0],
            "despite": asdict(DESPITE),
        }

    def shown_stages(self) -> dict[str, Funnel]:
        """The stages a report shows: the formalization review's only when it decided some records."""
        return {stage: f for stage, f in self.stages.items() if stage != FORMALIZATION_REVIEW or f.decided.total()}

    def _histograms(self) -> list[tuple[str, list[int]]]:
        return [
            ("safe plan length", self.safe_lengths),
            ("unsafe plan length", self.unsafe_lengths),
            ("safety effort", self.efforts),
            ("objects", self.objects),
        ]

    def comparison(self) -> list[tuple[str, str, str]]:
        """(figure, this run, DESPITE) rows."""
        checks, review = self.stages["checks"], self.stages["review"]
        rows = [("tasks failing the checks (execution checks and quality judge)", _rate(checks), format_rate(DESPITE.failing_checks))]
        rows += [
            (f"  from {source}", _rate(checks, source), format_rate(figure))
            for source, figure in DESPITE.failing_checks_by_source
            if checks.decided[source]
        ]
        rows.append(("tasks rejected by human review", _rate(review), format_rate(DESPITE.rejected_by_review)))
        if review.decided["normbank"]:
            rows.append(("  from normbank", _rate(review, "normbank"), format_rate(DESPITE.rejected_by_review_normbank)))
        both = self.safe_lengths + self.unsafe_lengths
        low, high = DESPITE.plan_steps
        rows.append(("reference plan steps (both plans)", f"{min(both)}-{max(both)}" if both else "–", f"{low}-{high}"))
        for group, figure in DESPITE.mean_plan_steps:
            lengths = self.lengths_by_group.get(group, [])
            rows.append((f"mean reference plan steps, {group}", f"{sum(lengths) / len(lengths):.1f}" if lengths else "–", f"{figure}"))
        rows.append(("safety effort: range, median", _range_and_centre(self.efforts), DESPITE.safety_effort))
        for group, typical in DESPITE.safety_actions:
            kinds = self.action_kinds.get(group, Counter())
            rows.append((f"safety actions, {group}", ", ".join(f"{k} {n}" for k, n in kinds.most_common(3)) or "–", typical))
        hard, total = DESPITE.hard_split
        judged, hard_here = self.difficulty["hard"] + self.difficulty["easy"], self.difficulty["hard"]
        ours = f"{format_rate(hard_here / judged)} ({hard_here} of {judged})" if judged else "– (no panel split)"
        rows.append(("hard split (panel mean score <= 0.8)", ours, f"{format_rate(hard / total)} ({hard:,} of {total:,})"))
        cost, basis = self.cost_per_task
        shown = "–" if cost is None else f"${cost:.4f}"  # replayed or unpriced calls make the cost unknown
        rows.append((f"LLM cost ({basis})", shown, f"${DESPITE.cost_per_task_usd} per validated task"))
        return rows

    def lines(self) -> list[str]:
        """Plain text for `runs show`."""
        out = [f"distribution of the {self.tasks} task(s) that passed the checks:"]
        for column, label in COUNTED:
            out.append(f"  {label}: " + (", ".join(f"{value} {n}" for value, n in self.counts[column].most_common()) or "–"))
        for group, kinds in sorted(self.action_kinds.items()):
            out.append(f"  safety actions, {group}: " + (", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "–"))
        for name, values in self._histograms():
            out.append(f"  {name}: {describe(values)}")
        out.append("rejections:")
        for stage, funnel in self.shown_stages().items():
            out.append(f"  {stage}: {sum(funnel.rejected.values())} of {sum(funnel.decided.values())} ({format_rate(funnel.rate())})")
        if self.rejected_by_check:
            out.append("  checks, by what failed last: " + ", ".join(f"{what} {n}" for what, n in self.rejected_by_check.most_common()))
        if self.failed_rounds:
            out.append("  failed rounds, by what failed: " + ", ".join(f"{what} {n}" for what, n in self.failed_rounds.most_common()))
        out.append("beside DESPITE's published figures (this run / DESPITE):")
        out += [f"  {figure}: {ours} / {theirs}" for figure, ours, theirs in self.comparison()]
        return out

    def markdown(self, level: int = 2) -> str:
        """Tables of the distribution, the rejections and DESPITE's figures (a Markdown section)."""
        h = "#" * level
        parts = [f"{h} Distribution\n", f"{self.tasks} task(s) passed the checks.\n"]
        for column, label in COUNTED:
            rows = self.counts[column].most_common()
            if rows:
                parts.append(_table((label, "tasks"), rows))
        kinds = [(group, kind, n) for group, counter in sorted(self.action_kinds.items()) for kind, n in counter.most_common()]
        if kinds:
            parts.append(_table(("danger group", "safety action", "tasks"), kinds))
        for name, values in self._histograms():
            if values:
                parts.append(f"{name.capitalize()}: {describe(values)}.\n\n" + _table((name, "tasks"), histogram(values)))
        parts.append(f"{h}# Rejections\n")
        parts.append(
            _table(
                ("stage", "decided", "rejected", "rate"),
                [
                    (stage, sum(f.decided.values()), sum(f.rejected.values()), format_rate(f.rate()))
                    for stage, f in self.shown_stages().items()
                ],
            )
        )
        if self.rejected_by_check or self.failed_rounds:
            found = sorted(set(self.rejected_by_check) | set(self.failed_rounds), key=lambda what: (-self.failed_rounds[what], what))
            parts.append(
                _table(
                    ("what failed", "records rejected (last round)", "rounds failed"),
                    [(what, self.rejected_by_check[what], self.failed_rounds[what]) for what in found],
                )
            )
        parts.append(f"{h}# Beside DESPITE's published figures\n")
        parts.append(_table(("figure", "here", "DESPITE"), self.comparison()))
        return "\n".join(parts)

    def card_section(self) -> str:
        """The release card's section: the distribution of the released tasks and the rejections in their runs."""
        return self.markdown(level=2)


def round_failure(round_: dict) -> str | None:
    """What failed first in a recorded generation round: a check's name, the quality judge, or None."""
    failed = next((check["name"] for check in round_.get("checks") or [] if not check.get("ok", True)), None)
    if failed is not None:
        return failed
    judge = round_.get("judge")
    return QUALITY_JUDGE if judge is not None and not judge.get("approved", True) else None


def safety_action_kinds(safe: str, unsafe: str) -> set[str]:
    """The kinds of safety action (`safeforge.task.taxonomy.safety_action_kind`) of the actions the
    safe plan takes and the unsafe plan never does (moves and pick-ups both take are not counted)."""
    unsafe_actions = {step.split()[0] for step in _steps(unsafe) if step}
    return {safety_action_kind(step.split()[0]) for step in _steps(safe) if step and step.split()[0] not in unsafe_actions}


def _steps(plan: str) -> list[str]:
    return [step.strip().lower() for step in plan.replace(")", "(").split("(") if step.strip()]


def _range_and_centre(values: list[int]) -> str:
    if not values:
        return "–"
    ordered = sorted(values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return f"{ordered[0]} to {ordered[-1]}, median {median:g}"


def histogram(values: Iterable[int]) -> list[tuple[int, int]]:
    """(value, count) for every value from the smallest to the largest (gaps as 0)."""
    counts = Counter(values)
    return [(v, counts[v]) for v in range(min(counts), max(counts) + 1)] if counts else []


def describe(values: list[int]) -> str:
    if not values:
        return "–"
    bars = " ".join(f"{v}:{n}" for v, n in histogram(values))
    return f"{min(values)}-{max(values)}, mean {sum(values) / len(values):.1f} ({bars})"


def _objects(folder: Path, metadata: TaskMetadata) -> int | None:
    """The task's object count: recorded by `task check`, else read from its problem."""
    if metadata.size is not None:
        return metadata.size.objects
    from safeforge.pddl.errors import PDDLError
    from safeforge.task.folder import Task  # the reader, for folders checked before sizes were recorded

    try:
        return len(Task.load(folder).model.objects)
    except (TaskError, PDDLError, OSError):  # a folder that no longer reads is counted without its objects
        return None


def read_tasks(folder: Path) -> list[tuple[Path, TaskMetadata]]:
    """The task folders in `folder` whose metadata reads, each with it (the others are left out)."""
    found = []
    for task in sorted(p for p in Path(folder).glob("*") if p.is_dir()):
        try:
            found.append((task, read_metadata(task)))
        except (TaskError, OSError):
            continue
    return found


def run_distribution(tasks: Iterable[tuple[Path, TaskMetadata]], ledger: RunLedger, cost_usd: float | None = None) -> Distribution:
    """A run's tasks (`read_tasks(<run>/tasks)`) and its ledger (`cost_usd`: what the run's LLM calls cost)."""
    found = Distribution(cost_usd=cost_usd)
    ids = []
    for folder, metadata in tasks:
        found.add_task(metadata, _objects(folder, metadata))
        ids.append(metadata.task_id or folder.name)
    if (split := read_split(ledger.path.parent)) is not None:
        found.add_split(split, ids)
    found.add_ledger(ledger)
    return found


def release_distribution(
    tasks: Iterable[tuple[Path, TaskMetadata]], runs: Iterable[RunStore], cost_usd: float | None = None
) -> Distribution:
    """The released tasks ((folder, metadata) pairs) and the rejections in the ledgers of their runs (open stores)."""
    found = Distribution(cost_usd=cost_usd)
    ids = []
    for folder, metadata in tasks:
        found.add_task(metadata, _objects(folder, metadata))
        ids.append(metadata.task_id or folder.name)
    runs = list(runs)
    splits = [split for store in runs if (split := read_split(store.root)) is not None]
    if splits:
        found.add_split({key: [t for split in splits for t in split.get(key) or ()] for key in ("hard", "easy")}, ids)
    for store in runs:
        found.add_ledger(store.ledger)
    return found


def read_split(root: Path) -> dict[str, Any] | None:
    """The panel split a run holds (`<run>/split.json`), None when it has none or it is unreadable."""
    try:
        data = json.loads((root / SPLIT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def format_rate(rate: float | None) -> str:
    """A rate as a percentage, "–" for none."""
    return "–" if rate is None else f"{100 * rate:.1f}%"


def _rate(funnel: Funnel, source: str | None = None) -> str:
    decided = funnel.decided[source] if source else sum(funnel.decided.values())
    rejected = funnel.rejected[source] if source else sum(funnel.rejected.values())
    return f"{format_rate(funnel.rate(source))} ({rejected} of {decided})"


def _table(header: tuple[str, ...], rows: Iterable[tuple]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
