"""Inter-annotator agreement on the accept/reject decision: percent agreement and Cohen's kappa.

Only tasks with two or more independent annotators count (an adjudicating annotation is not
independent). Percent agreement pools every pair of annotators on every such task. Cohen's kappa
is computed for each pair of annotators over the tasks both decided,
    kappa = (p_o - p_e) / (1 - p_e),
p_o the share of those tasks on which they agree and p_e the agreement expected by chance from
each one's own accept/reject rates; the run's kappa is the mean over annotator pairs weighted by
their shared tasks. A pair whose chance agreement is 1 (both always gave the same single answer)
has no defined kappa and is left out of the mean.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

DECISIONS = ("accept", "reject")


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


@dataclass(frozen=True)
class PairAgreement:
    """Two annotators over the tasks both decided."""

    annotators: tuple[str, str]
    tasks: int
    percent: float
    cohen_kappa: float | None


@dataclass
class Agreement:
    """Agreement over a run's tasks with two or more independent annotators."""

    tasks: int
    """Tasks with two or more annotators."""
    comparisons: int
    """Annotator pairs compared, over all those tasks."""
    percent: float
    cohen_kappa: float | None
    pairs: list[PairAgreement] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def agreement(decisions: Mapping[Any, Mapping[str, str]]) -> Agreement | None:
    """From {task: {annotator: "accept"|"reject"}}; None when no task has two annotators."""
    shared = {task: votes for task, votes in decisions.items() if len(votes) >= 2}
    if not shared:
        return None
    agreeing = comparisons = 0
    by_pair: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for votes in shared.values():
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
    return Agreement(len(shared), comparisons, round(100.0 * agreeing / comparisons, 2), _rounded(kappa), pairs)


def task_agreement(votes: Mapping[str, str], run: Agreement | None) -> dict | None:
    """One task's agreement for its metadata: its annotators' pairwise percent agreement here, and
    the run-wide kappa of its annotator pairs (weighted mean); None with fewer than two annotators."""
    if len(votes) < 2:
        return None
    pairs = list(itertools.combinations(sorted(votes), 2))
    percent = 100.0 * sum(votes[a] == votes[b] for a, b in pairs) / len(pairs)
    known = {p.annotators: p for p in (run.pairs if run else [])}
    defined = [(kappa, known[pair].tasks) for pair in pairs if pair in known and (kappa := known[pair].cohen_kappa) is not None]
    kappa = sum(k * n for k, n in defined) / sum(n for _, n in defined) if defined else None
    return {"annotators": len(votes), "percent": round(percent, 2), "cohen_kappa": _rounded(kappa)}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
