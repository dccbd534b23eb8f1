"""Inter-annotator agreement on the accept/reject decision, for any number of annotators.

Counted over every task with two or more votes, decided or not (an adjudication is not a vote):
- percent agreement over every pair of annotators on every such task;
- Krippendorff's alpha (nominal), for any number of annotators and tasks that not all of them voted on:
      alpha = 1 - D_o / D_e,
  with D_o the disagreement observed among the votes of each task and D_e the disagreement expected
  from all votes pooled (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"); undefined
  when every vote is the same;
- Cohen's kappa for each pair of annotators over the tasks both voted on,
      kappa = (p_o - p_e) / (1 - p_e),
  p_o the share of those tasks on which they agree and p_e the agreement expected by chance from
  each one's own accept/reject rates; the run's kappa is the mean over pairs weighted by their shared
  tasks (a pair whose chance agreement is 1 has no defined kappa and is left out).
Per annotator, over all their votes: how many, how many of the decided tasks' final decisions they
agreed with, and the median time a vote took (Label Studio's lead time).
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from safeforge.task.metadata import Review

DECISIONS = ("accept", "reject")
FINAL_VOTE = {"accepted": "accept", "rejected": "reject"}


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items; None when undefined (p_e = 1)."""
    if len(first) != len(second):
        raise ValueError(f"the raters labelled {len(first)} and {len(second)} items; kappa needs the same items")
    if not first:
        return None
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=False)) / n
    labels = set(first) | set(second)
    expected = sum((first.count(label) / n) * (second.count(label) / n) for label in labels)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def krippendorff_alpha(units: Iterable[Sequence[str]]) -> float | None:
    """Krippendorff's alpha for nominal values; each unit is the values its raters gave (a unit
    with fewer than two is not pairable and left out). None when undefined (one value throughout)."""
    coincidences: dict[tuple[str, str], float] = {}
    for values in units:
        if len(values) < 2:
            continue
        weight = 1.0 / (len(values) - 1)
        for i, j in itertools.permutations(range(len(values)), 2):
            coincidences[values[i], values[j]] = coincidences.get((values[i], values[j]), 0.0) + weight
    totals: dict[str, float] = {}
    for (value, _), count in coincidences.items():
        totals[value] = totals.get(value, 0.0) + count
    n = sum(totals.values())
    observed = sum(count for (a, b), count in coincidences.items() if a != b)
    expected = sum(totals[a] * totals[b] for a, b in itertools.permutations(totals, 2)) / (n - 1) if n > 1 else 0.0
    if expected == 0:
        return None
    return 1.0 - observed / expected


@dataclass(frozen=True)
class TaskVotes:
    """One task's votes as agreement needs them."""

    votes: Mapping[str, str]
    """Annotator -> their vote, accept or reject."""
    final: str | None = None
    """The decision, "accepted" or "rejected", once there is one."""
    lead_times: Mapping[str, float] = field(default_factory=dict)
    """Annotator -> seconds their vote took, where Label Studio recorded it."""


@dataclass(frozen=True)
class PairAgreement:
    """Two annotators over the tasks both voted on."""

    annotators: tuple[str, str]
    tasks: int
    percent: float
    cohen_kappa: float | None


@dataclass(frozen=True)
class AnnotatorAgreement:
    """One annotator over all their votes."""

    annotator: str
    votes: int
    decided: int
    """Their votes on tasks that have a final decision."""
    agreed_with_final: int
    """Of those, how many match the final decision."""
    median_lead_time_s: float | None

    @property
    def percent_with_final(self) -> float | None:
        return round(100.0 * self.agreed_with_final / self.decided, 2) if self.decided else None


@dataclass
class Agreement:
    """Agreement over a run's tasks with two or more votes, and every annotator's record."""

    tasks: int
    """Tasks with two or more votes (decided or not)."""
    comparisons: int
    """Annotator pairs compared, over all those tasks."""
    percent: float | None
    krippendorff_alpha: float | None
    cohen_kappa: float | None
    pairs: list[PairAgreement] = field(default_factory=list)
    annotators: list[AnnotatorAgreement] = field(default_factory=list)

    def to_dict(self) -> dict:
        data = asdict(self)
        for row, annotator in zip(data["annotators"], self.annotators, strict=True):
            row["percent_with_final"] = annotator.percent_with_final
        return data

    def lines(self, alias: Callable[[str], str] = str) -> list[str]:
        """The agreement as text lines (`alias` renames annotators, e.g. to pseudonyms)."""
        if not self.tasks:
            lines = ["Agreement: no task has two votes yet"]
        else:
            lines = [
                f"Agreement over {self.tasks} task(s) with 2+ votes: {self.percent:.1f}% ({self.comparisons} pair comparisons), "
                f"Krippendorff's alpha {_shown(self.krippendorff_alpha)}, Cohen's kappa {_shown(self.cohen_kappa)} (mean of pairs)"
            ]
            lines += [
                f"  {alias(p.annotators[0])} & {alias(p.annotators[1])}: {p.tasks} task(s), {p.percent:.1f}%, kappa {_shown(p.cohen_kappa)}"
                for p in self.pairs
            ]
        if self.annotators:
            lines += ["", "Annotators: votes, agreement with the final decisions, median time per vote"]
            lines += [f"  {alias(a.annotator)}: {a.votes}, {_with_final(a)}, {_seconds(a.median_lead_time_s)}" for a in self.annotators]
        return lines

    def to_markdown(self, alias: Callable[[str], str] = str) -> str:
        """Agreement and the annotator table in Markdown (for the Prefect artifact and the release card)."""
        if self.tasks:
            summary = (
                f"{self.tasks} task(s) with two or more votes: {self.percent:.1f}% pairwise agreement, "
                f"Krippendorff's alpha {_shown(self.krippendorff_alpha)}, Cohen's kappa {_shown(self.cohen_kappa)} "
                "(mean over annotator pairs, weighted by shared tasks)."
            )
        else:
            summary = "No task has two votes yet: agreement cannot be measured."
        rows = [f"| {alias(a.annotator)} | {a.votes} | {_with_final(a)} | {_seconds(a.median_lead_time_s)} |" for a in self.annotators]
        table = ["| annotator | votes | agreed with final decision | median time per vote |", "|---|---|---|---|", *rows]
        pairs = [
            f"| {alias(p.annotators[0])} | {alias(p.annotators[1])} | {p.tasks} | {p.percent:.1f}% | {_shown(p.cohen_kappa)} |"
            for p in self.pairs
        ]
        pair_table = ["| annotator | annotator | shared tasks | agreement | Cohen's kappa |", "|---|---|---|---|---|", *pairs]
        parts = [summary]
        if self.annotators:
            parts.append("\n".join(table))
        if self.pairs:
            parts.append("\n".join(pair_table))
        return "\n\n".join(parts)


def _shown(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f} s"


def _with_final(row: AnnotatorAgreement) -> str:
    percent = row.percent_with_final
    return "no decided task yet" if percent is None else f"{row.agreed_with_final} of {row.decided} ({percent:.1f}%)"


def agreement(tasks: Iterable[TaskVotes]) -> Agreement:
    """Agreement over the tasks with two or more votes, and every annotator's record (module docstring)."""
    tasks = list(tasks)
    shared = [task.votes for task in tasks if len(task.votes) >= 2]
    agreeing = comparisons = 0
    by_pair: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for votes in shared:
        for a, b in itertools.combinations(sorted(votes), 2):
            comparisons += 1
            agreeing += votes[a] == votes[b]
            labels = by_pair.setdefault((a, b), ([], []))
            labels[0].append(votes[a])
            labels[1].append(votes[b])
    pairs = [
        PairAgreement(
            pair,
            len(first),
            round(100.0 * sum(x == y for x, y in zip(first, second, strict=False)) / len(first), 2),
            _rounded(cohen_kappa(first, second)),
        )
        for pair, (first, second) in sorted(by_pair.items())
    ]
    defined = [(p.cohen_kappa, p.tasks) for p in pairs if p.cohen_kappa is not None]
    kappa = sum(k * n for k, n in defined) / sum(n for _, n in defined) if defined else None
    return Agreement(
        tasks=len(shared),
        comparisons=comparisons,
        percent=round(100.0 * agreeing / comparisons, 2) if comparisons else None,
        krippendorff_alpha=_rounded(krippendorff_alpha([list(votes.values()) for votes in shared])),
        cohen_kappa=_rounded(kappa),
        pairs=pairs,
        annotators=_annotators(tasks),
    )


def _annotators(tasks: list[TaskVotes]) -> list[AnnotatorAgreement]:
    votes: Counter[str] = Counter()
    decided: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    times: dict[str, list[float]] = {}
    for task in tasks:
        for annotator, vote in task.votes.items():
            votes[annotator] += 1
            if task.final in FINAL_VOTE:
                decided[annotator] += 1
                agreed[annotator] += vote == FINAL_VOTE[task.final]
            if annotator in task.lead_times:
                times.setdefault(annotator, []).append(task.lead_times[annotator])
    return [
        AnnotatorAgreement(
            name, votes[name], decided[name], agreed[name], round(statistics.median(times[name]), 1) if times.get(name) else None
        )
        for name in sorted(votes)
    ]


def votes_of(review: Review) -> TaskVotes:
    """A task's votes as its review block records them (`votes_from`)."""
    return votes_from(review.annotations, review.decision)


def votes_from(annotations: Iterable[Mapping[str, Any]], decision: str | None) -> TaskVotes:
    """The votes of a review's recorded annotations (`annotation_entry`): each annotator's latest
    annotation that is a vote (an adjudication is not, unless it was ignored and its author has no
    other vote); `decision` is the final one, if any."""
    entries = sorted(annotations, key=lambda a: (str(a.get("created_at", "")), int(a.get("id", 0))))
    voters = {a.get("annotator") for a in entries if not a.get("adjudicating")}
    votes: dict[str, str] = {}
    lead_times: dict[str, float] = {}
    for entry in entries:
        who, vote = str(entry.get("annotator")), entry.get("decision")
        counts = not entry.get("adjudicating") or (entry.get("ignored_adjudication") and who not in voters)
        if counts and vote in ("accept", "reject"):
            votes[who] = vote
            if isinstance(entry.get("lead_time"), int | float):
                lead_times[who] = float(entry["lead_time"])
            else:
                lead_times.pop(who, None)
    return TaskVotes(votes, decision, lead_times)


def task_agreement(votes: Mapping[str, str]) -> dict[str, Any] | None:
    """One task's agreement for its metadata: how many voted and their pairwise percent agreement;
    None with fewer than two votes (the run-wide figures are in `review status`)."""
    if len(votes) < 2:
        return None
    pairs = list(itertools.combinations(sorted(votes), 2))
    percent = 100.0 * sum(votes[a] == votes[b] for a, b in pairs) / len(pairs)
    return {"annotators": len(votes), "percent": round(percent, 2)}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
