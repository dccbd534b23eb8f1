"""What a run did: counts per state, source and stage, acceptance rates, tokens and dollars.

`run_overview(folder)` reads a run's ledger (`ledger.sqlite`) and its LLM call ledger
(`llm.sqlite`) without changing either; `list_runs(outputs)` finds the runs in a folder.

Stages and their funnels (a record "enters" a stage when it reached the stage's input state):
- extract: every record; passes when a danger was extracted, is rejected as `no_danger`;
- formalization review (only in runs that ask for it): records that waited for it
  (`awaiting_formalization_review`); pass when accepted, else `rejected_by_formalization_review`;
- checks (generation and checks): extracted records the formalization review does not hold; pass
  when `checked`, else `rejected_by_checks`;
- review: checked records; pass when `accepted`, else `rejected_by_review`.
An `error` counts against the stage the record was in when it failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from safeforge.common.errors import SafeforgeError
from safeforge.llm import CallLedger
from safeforge.runs.distribution import Distribution, format_rate, read_tasks, run_distribution
from safeforge.runs.ledger import LEDGER_FILE, LLM_DB_FILE, SPOC_DIR, STATES, RunLedger
from safeforge.runs.spec import read_spec
from safeforge.task.metadata import TaskMetadata

AWAITING, REJECTED_FORMALIZATION = "awaiting_formalization_review", "rejected_by_formalization_review"
_PAST_EXTRACT = (
    "extracted",
    "checked",
    "in_review",
    "accepted",
    "rejected_by_review",
    "rejected_by_checks",
    AWAITING,
    REJECTED_FORMALIZATION,
)
_PAST_CHECKS = ("checked", "in_review", "accepted", "rejected_by_review")


class RunNotFound(SafeforgeError):
    """The folder is not a run (it has no ledger.sqlite)."""


@dataclass(frozen=True)
class StageFunnel:
    """How the records that entered one stage left it."""

    stage: str
    entered: int
    passed: int
    rejected: int
    errors: int
    waiting: int
    """Still in the stage's input state (not processed yet, or awaiting review)."""

    @property
    def rate(self) -> float | None:
        """passed / decided (rejections and errors included); None before any decision."""
        decided = self.passed + self.rejected + self.errors
        return self.passed / decided if decided else None


@dataclass(frozen=True)
class LLMCost:
    """LLM use of a run: HTTP calls (cache hits apart), tokens, dollars."""

    calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    by_stage: dict[str, dict] = field(default_factory=dict)

    @property
    def known(self) -> bool:
        """Some of the cost is known: not every paid call was unpriced (replayed, or no price)."""
        return not self.unpriced_calls or bool(self.cost_usd)


@dataclass(frozen=True)
class RunOverview:
    """The summary `safeforge runs show` prints and each Prefect run publishes."""

    name: str
    root: Path
    records: int
    states: dict[str, int]
    by_source: dict[str, dict[str, int]]
    stages: list[StageFunnel]
    stages_by_source: dict[str, list[StageFunnel]]
    cost: LLMCost
    reasons: dict[str, list[tuple[str, int]]]
    """For each terminal failure state: its reasons, most frequent first."""
    llm_endpoints: list[str] | None = field(default_factory=list)
    """What the run's task folders say made their LLM responses: "real", "replay" (hand-written);
    None when the task folders were not read (`run_overview(..., tasks=False)`)."""
    spec: dict[str, Any] | None = None
    """The run's run.json (`safeforge.runs.spec`): what made it; None for a run made before run.json."""
    distribution: Distribution | None = field(default_factory=Distribution)
    """The tasks that passed the checks and the rejections, as DESPITE reports its dataset (None:
    the task folders were not read)."""
    spoc_files: int = 0
    """The checked tasks that export to SPOC: the goal-condition files in `<run>/spoc/`."""

    @property
    def replayed(self) -> bool:
        return "replay" in (self.llm_endpoints or [])

    @property
    def accepted(self) -> int:
        return self.states.get("accepted", 0)

    @property
    def checked(self) -> int:
        """Records that passed the checks (whatever review made of them since)."""
        return self.stage("checks").passed

    @property
    def acceptance_rate(self) -> float | None:
        """Accepted / all records (the run's yield)."""
        return self.accepted / self.records if self.records else None

    @property
    def cost_per_accepted_usd(self) -> float | None:
        return self.cost.cost_usd / self.accepted if self.accepted and self.cost.known else None

    @property
    def cost_per_checked_usd(self) -> float | None:
        return self.cost.cost_usd / self.checked if self.checked and self.cost.known else None

    def stage(self, name: str) -> StageFunnel:
        return next(s for s in self.stages if s.stage == name)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "root": str(self.root),
            "records": self.records,
            "states": self.states,
            "by_source": self.by_source,
            "stages": [{**asdict(s), "rate": s.rate} for s in self.stages],
            "stages_by_source": {src: [{**asdict(s), "rate": s.rate} for s in funnels] for src, funnels in self.stages_by_source.items()},
            "acceptance_rate": self.acceptance_rate,
            "cost": asdict(self.cost),
            "cost_per_accepted_usd": self.cost_per_accepted_usd,
            "cost_per_checked_usd": self.cost_per_checked_usd,
            "reasons": {state: [list(r) for r in rs] for state, rs in self.reasons.items()},
            "llm_endpoints": self.llm_endpoints,
            "spec": self.spec,
            "distribution": None if self.distribution is None else self.distribution.to_dict(),
            "spoc_files": self.spoc_files,
        }

    @property
    def spoc_line(self) -> str:
        """How many of the tasks that passed the checks export to SPOC, and where their files are."""
        return f"SPOC goal-condition files: {self.spoc_files} of the {self.checked} checked task(s) export -> {self.root / SPOC_DIR}"

    def to_markdown(self) -> str:
        """Tables of states per source, stages, cost and the distribution (the Prefect artifact of a run)."""
        states = [s for s in STATES if self.states.get(s)]
        lines = [
            f"# Run `{self.name}`",
            "",
            f"{self.records} records; accepted {self.accepted} ({format_rate(self.acceptance_rate)}); passed the checks {self.checked}.",
            "",
            f"{self.spoc_line}.",
            "",
            "## Records per state",
            "",
            "| source | " + " | ".join(states) + " | total |",
            "|---" * (len(states) + 2) + "|",
        ]
        for source, counts in sorted(self.by_source.items()):
            lines.append(f"| {source} | " + " | ".join(str(counts.get(s, 0)) for s in states) + f" | {sum(counts.values())} |")
        lines.append("| **all** | " + " | ".join(str(self.states.get(s, 0)) for s in states) + f" | {self.records} |")
        lines += [
            "",
            "## Stages",
            "",
            "| stage | entered | passed | rejected | errors | waiting | pass rate |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {s.stage} | {s.entered} | {s.passed} | {s.rejected} | {s.errors} | {s.waiting} | {format_rate(s.rate)} |"
            for s in self.stages
        ]
        c = self.cost
        lines += ["", "## LLM cost", ""]
        if self.replayed:
            lines += [f"**{REPLAY_NOTE}**", ""]
        lines += ["| stage | calls | cache hits | tokens in | tokens out | USD |", "|---|---|---|---|---|---|"]
        lines += [
            f"| {stage} | {v['calls']} | {v['cache_hits']} | {v['tokens_in']} | {v['tokens_out']} | "
            f"{format_cost(v['cost_usd'], v['unpriced_calls'])} |"
            for stage, v in c.by_stage.items()
        ]
        lines += [
            f"| **all** | {c.calls} | {c.cache_hits} | {c.tokens_in} | {c.tokens_out} | {format_cost(c.cost_usd, c.unpriced_calls)} |",
            "",
            f"Per accepted task: {format_usd(self.cost_per_accepted_usd)}; per checked task: {format_usd(self.cost_per_checked_usd)}.",
        ]
        if c.unpriced_calls:
            lines.append(f"{c.unpriced_calls} call(s) have no known price (a replayed endpoint, or a model without a price); not included.")
        if self.distribution is not None:
            lines += ["", self.distribution.markdown()]
        return "\n".join(lines)


REPLAY_NOTE = (
    "Replayed: these responses are hand-written and served by the replay server, not a model's; "
    "the cost is what the calls would cost at the model's prices"
)


def llm_endpoints(metadata: Iterable[TaskMetadata]) -> list[str]:
    """What the run's task folders (accepted or kept rejected) say made their LLM responses."""
    return sorted({m.provenance.llm_endpoint for m in metadata if m.provenance.llm_endpoint})


def format_usd(value: float | None) -> str:
    return "–" if value is None else f"${value:.6f}"


def format_cost(cost_usd: float, unpriced_calls: int) -> str:
    """Dollars of the priced calls, "unknown" when none was priced, and the unpriced calls."""
    if not unpriced_calls:
        return f"${cost_usd:.6f}"
    if not cost_usd:
        return f"unknown ({unpriced_calls} unpriced call(s))"
    return f"${cost_usd:.6f} + unknown ({unpriced_calls} unpriced call(s))"


def is_run(folder: Path) -> bool:
    return (Path(folder) / LEDGER_FILE).is_file()


def named_run(name: str | Path, outputs: Path) -> Path | None:
    """The run a command is given, the one way every command reads it: its name under `outputs`,
    else a path to a run folder; None when it is neither."""
    return next((folder for folder in (Path(outputs) / name, Path(name)) if is_run(folder)), None)


def list_runs(outputs: Path) -> list[Path]:
    """Run folders directly under `outputs`, newest ledger first."""
    outputs = Path(outputs)
    if not outputs.is_dir():
        return []
    runs = [p for p in outputs.iterdir() if p.is_dir() and is_run(p)]
    return sorted(runs, key=_last_write, reverse=True)


def _last_write(run: Path) -> float:
    """When the run's ledger last recorded a transition."""
    ledger = RunLedger(run / LEDGER_FILE)
    try:
        return ledger.last_change() or 0.0
    finally:
        ledger.close()


def funnels(states: dict[str, int], error_origins: dict[str, int], formalizations_reviewed: int = 0) -> list[StageFunnel]:
    """The stage funnels from state counts, where the errors happened, and how many records ever
    waited for the formalization review (its funnel is there only when some did)."""
    n = states.get
    err = error_origins.get
    past_extract = sum(n(s, 0) for s in _PAST_EXTRACT) + err("extracted", 0) + err("checked", 0) + err(AWAITING, 0)
    held = n(AWAITING, 0) + n(REJECTED_FORMALIZATION, 0) + err(AWAITING, 0)  # not (yet) on to code generation
    past_checks = sum(n(s, 0) for s in _PAST_CHECKS) + err("checked", 0)
    formalization = StageFunnel(
        "formalization review",
        formalizations_reviewed,
        formalizations_reviewed - held,
        n(REJECTED_FORMALIZATION, 0),
        err(AWAITING, 0),
        n(AWAITING, 0),
    )
    return [
        StageFunnel("extract", sum(states.values()), past_extract, n("no_danger", 0), err("pending", 0), n("pending", 0)),
        *([formalization] if formalizations_reviewed else []),
        StageFunnel("checks", past_extract - held, past_checks, n("rejected_by_checks", 0), err("extracted", 0), n("extracted", 0)),
        StageFunnel(
            "review", past_checks, n("accepted", 0), n("rejected_by_review", 0), err("checked", 0), n("checked", 0) + n("in_review", 0)
        ),
    ]


def llm_cost(path: Path) -> LLMCost:
    """Totals of an LLM call ledger file; zeros when the run made no LLM call."""
    if not Path(path).is_file():
        return LLMCost()
    ledger = CallLedger(path)
    try:
        summaries = ledger.summary()
    finally:
        ledger.close()
    by_stage = {s.stage: asdict(s) for s in summaries}
    for values in by_stage.values():
        values.pop("stage")
    return LLMCost(
        calls=sum(s.calls for s in summaries),
        cache_hits=sum(s.cache_hits for s in summaries),
        tokens_in=sum(s.tokens_in for s in summaries),
        tokens_out=sum(s.tokens_out for s in summaries),
        tokens_cached=sum(s.tokens_cached for s in summaries),
        cost_usd=sum(s.cost_usd for s in summaries),
        unpriced_calls=sum(s.unpriced_calls for s in summaries),
        by_stage=by_stage,
    )


def run_overview(folder: str | Path, *, tasks: bool = True, ledger: RunLedger | None = None) -> RunOverview:
    """Summarise the run in `folder` (raises RunNotFound when it has no ledger). Without `tasks`,
    from its ledgers alone: the task folders (the distribution, the LLM endpoints) are not read,
    which a run of thousands of tasks takes seconds over. `ledger`: the run's ledger when the caller
    has it open (else it is opened and closed here)."""
    root = Path(folder)
    if not is_run(root):
        raise RunNotFound(f"{root}: not a run (no {LEDGER_FILE})")
    cost = llm_cost(root / LLM_DB_FILE)
    passed = read_tasks(root / "tasks") if tasks else []
    opened = ledger is None
    if ledger is None:
        ledger = RunLedger(root / LEDGER_FILE)
    try:
        by_source = ledger.counts(by_source=True)
        origins = ledger.error_origins()
        reasons = {
            state: ledger.reasons(state)
            for state in ("no_danger", REJECTED_FORMALIZATION, "rejected_by_checks", "rejected_by_review", "error")
        }
        waited = ledger.reached(AWAITING)
        priced = (root / LLM_DB_FILE).is_file() and not cost.unpriced_calls  # replayed or unpriced calls: no cost per task
        distribution = run_distribution(passed, ledger, cost.cost_usd if priced else None) if tasks else None
    finally:
        if opened:
            ledger.close()
    states: dict[str, int] = {}
    for counts in by_source.values():
        for state, count in counts.items():
            states[state] = states.get(state, 0) + count
    all_origins: dict[str, int] = {}
    for counts in origins.values():
        for state, count in counts.items():
            all_origins[state] = all_origins.get(state, 0) + count
    return RunOverview(
        name=root.name,
        root=root,
        records=sum(states.values()),
        states={s: states[s] for s in STATES if s in states},
        by_source=by_source,
        stages=funnels(states, all_origins, sum(waited.values())),
        stages_by_source={src: funnels(counts, origins.get(src, {}), waited.get(src, 0)) for src, counts in sorted(by_source.items())},
        cost=cost,
        reasons={s: r for s, r in reasons.items() if r},
        llm_endpoints=llm_endpoints(m for _, m in [*passed, *read_tasks(root / "rejected")]) if tasks else None,
        spec=read_spec(root),
        distribution=distribution,
        spoc_files=sum(1 for _ in (root / SPOC_DIR).glob("*.json")),
    )
