"""What a release says about its review: `review_report` (agreement over every task of the release's
runs with two or more votes, decided or not, released or not; each annotator's record; the
disagreements found, by kind, and how many were resolved; the same for the formalization review
before code generation, when the runs had one) for the card, and `public_review` (a review block
with every person under a pseudonym) for the published metadata. Publishing calls both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from safeforge.generation import formalization_review
from safeforge.review._agreement import Agreement, TaskVotes, agreement, votes_from, votes_of
from safeforge.review._mapping import FORMALIZATION_MAPPING_FILE, ReviewMapping
from safeforge.review._plot import agreement_plot
from safeforge.review._workload import AnnotatorWork, workload, workload_markdown
from safeforge.runs.ledger import RunStore
from safeforge.task.files import TaskError, read_metadata
from safeforge.task.metadata import Review

_REVIEWED = ("in_review", "accepted", "rejected_by_review")
_KINDS = {
    "votes": "votes split",
    "corrections": "conflicting corrections",
    "edited_vote": "vote changed by another user",
    "ignored_adjudication": "adjudication by someone not allowed to",
    "vanished_vote": "recorded vote deleted or changed author",
}


@dataclass
class ReviewReport:
    """The review of a set of runs."""

    runs: list[str]
    agreement: Agreement
    disagreements: dict[str, Counter] = field(default_factory=dict)
    """Kind -> {"found", "resolved", "adjudicated"} counts."""
    formalizations: Agreement | None = None
    """The formalization review's agreement (before code generation), None when no run had one."""
    formalization_disagreements: dict[str, Counter] = field(default_factory=dict)
    annotators: list[AnnotatorWork] = field(default_factory=list)
    """Each annotator's work over the runs (done, still pending, agreement with the final decisions)."""

    def to_markdown(self, alias: Callable[[str], str] = str) -> str:
        """The card's review section (annotators named by `alias`); "" when nobody voted."""
        parts = []
        if self.agreement.annotators:
            where = "each task's are in its `review.disagreements`"
            parts += [self.agreement.to_markdown(alias), _disagreements(self.disagreements, where)]
            if self.annotators:
                parts.append(
                    "Each reviewer's work (pending: tasks of the runs still waiting for their vote or, for a named "
                    "adjudicator, their adjudication):\n\n" + workload_markdown(self.annotators, alias)
                )
        if self.formalizations is not None and self.formalizations.annotators:
            parts += [
                "### Formalization review (before code generation)\n\nReviewers judged each record's danger formalization "
                "before its PDDL was generated (each task's verdict is in `provenance.formalization_review`).",
                self.formalizations.to_markdown(alias),
                _disagreements(self.formalization_disagreements, "in the runs' ledgers"),
            ]
        return "\n\n".join(parts)

    def write_plot(self, path: str | Path, alias: Callable[[str], str] = str) -> Path | None:
        return agreement_plot(self.agreement, path, alias)


def _disagreements(kinds: dict[str, Counter], where: str) -> str:
    if not kinds:
        return "The reviewers had no disagreement."
    rows = [
        f"| {_KINDS.get(kind, kind)} | {counts['found']} | {counts['resolved']} | {counts['adjudicated']} |"
        for kind, counts in sorted(kinds.items())
    ]
    return f"Disagreements among the reviewers ({where}):\n\n" + "\n".join(
        ["| kind | found | resolved | of which by an adjudicator |", "|---|---|---|---|", *rows]
    )


def _count(kinds: dict[str, Counter], kind: str, resolved: bool, adjudicated: bool) -> None:
    counts = kinds.setdefault(kind, Counter())
    counts["found"] += 1
    counts["resolved"] += resolved
    counts["adjudicated"] += adjudicated


def review_report(stores: Iterable[RunStore]) -> ReviewReport:
    """The review of the runs' tasks that reached review (unreadable metadata is left out), and of
    their formalizations where the runs had a formalization review."""
    names, formalization_votes = [], []
    votes: dict[str, TaskVotes] = {}
    waiting: set[str] = set()
    queue: set[str] = set()
    adjudicators: set[str] = set()
    kinds: dict[str, Counter] = {}
    formalization_kinds: dict[str, Counter] = {}
    for store in stores:
        names.append(store.name)
        mapping = ReviewMapping.load(store)
        adjudicators |= set(mapping.adjudicators)
        if (store.root / FORMALIZATION_MAPPING_FILE).is_file():  # the run's formalizations went to review
            for row in store.ledger.records():
                verdict = formalization_review(store, row.record_id)
                if verdict is not None:
                    formalization_votes.append(votes_from(verdict.get("annotations", []), verdict.get("decision")))
        for found in store.ledger.disagreements(review="formalizations").values():
            for kept in found:
                _count(formalization_kinds, kept["kind"], kept.get("resolved_at") is not None, kept.get("resolution") == "adjudicated")
        for state in _REVIEWED:
            for row in store.ledger.records(state=state):
                try:
                    review = read_metadata(store.task_dir(row.task_id or row.record_id)).review
                except TaskError:
                    continue
                key = f"{store.name}/{row.task_id or row.record_id}"
                if state == "in_review":
                    (queue if (row.task_id or row.record_id) in mapping.queue else waiting).add(key)
                if review is None:
                    continue
                votes[key] = votes_of(review)
                for entry in review.disagreements:
                    _count(kinds, entry.kind, entry.resolved_at is not None, entry.resolution == "adjudicated")
    formalizations = agreement(formalization_votes) if formalization_votes else None
    overall = agreement(votes.values())
    work = workload(votes, waiting, queue, adjudicators, overall)
    return ReviewReport(names, overall, kinds, formalizations, formalization_kinds, work)


def public_review(review: Review, alias: Callable[[str], str]) -> Review:
    """The review block with every person named by `alias`: annotations (annotator, author),
    corrections, vanished votes, disagreements (annotators, resolved_by) and the explanation."""
    data = review.model_dump(mode="json")
    names: dict[str, str] = {}

    def renamed(name):
        if not isinstance(name, str) or not name:
            return name
        names[name] = alias(name)
        return names[name]

    for entry in (*data.get("annotations", []), *data.get("corrections", [])):
        for key in ("annotator", "author"):
            if key in entry:
                entry[key] = renamed(entry[key])
    for entry in data.get("vanished_votes", []):
        for key in ("annotator", "now_annotator"):
            entry[key] = renamed(entry.get(key))
    for entry in data.get("disagreements", []):
        entry["annotators"] = [renamed(name) for name in entry.get("annotators", [])]
        entry["resolved_by"] = renamed(entry.get("resolved_by"))
    for name, pseudonym in sorted(names.items(), key=lambda item: -len(item[0])):
        data["explanation"] = str(data.get("explanation", "")).replace(name, pseudonym)
    return Review.model_validate(data)
