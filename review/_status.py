"""`review_status`: where a run's review stands, from the ledger, review.json and the task metadata
(no server needed): by source, tasks not pushed yet, pending, accepted, rejected and the human
rejection rate (DESPITE reports 32.6% overall, 55.1% for NormBank); rejection reasons; the
adjudication queue and the tasks waiting for votes, as the last pull saw them; every unresolved
disagreement; agreement over every task with two or more votes, decided or not, and each
annotator's work (done, pending, locked now when the server's data dir is given and on this
machine, agreement with the final decisions; `_workload`). With `formalizations=True`, the same for the run's formalization review (from
review_formalizations.json and each record's formalization_review.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from safeforge.generation import formalization_review
from safeforge.review._agreement import Agreement, TaskVotes, agreement, votes_from, votes_of
from safeforge.review._formalization_data import FORMALIZATION_REJECTION_REASONS
from safeforge.review._locks import held_locks
from safeforge.review._mapping import FORMALIZATION_MAPPING_FILE, ReviewMapping
from safeforge.review._task_data import REJECTION_REASONS
from safeforge.review._workload import AnnotatorWork, workload, workload_lines, workload_markdown
from safeforge.runs.ledger import RunStore
from safeforge.task.files import TaskError, read_metadata

_COLUMNS = (("checked", "not_pushed"), ("in_review", "pending"), ("accepted", "accepted"), ("rejected_by_review", "rejected"))
NO_REASON = "no_reason_given"
AWAITING = "awaiting_formalization_review"


@dataclass
class SourceStatus:
    not_pushed: int = 0
    pending: int = 0
    accepted: int = 0
    rejected: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    """Rejection reason -> rejected tasks giving it (a task may give several)."""

    @property
    def reviewed(self) -> int:
        """Decided: accepted or rejected."""
        return self.accepted + self.rejected

    @property
    def undecided(self) -> int:
        """Not decided: pending, or not pushed yet."""
        return self.pending + self.not_pushed

    @property
    def rejection_rate(self) -> float | None:
        """Share of reviewed tasks that were rejected, in percent."""
        return round(100.0 * self.rejected / self.reviewed, 2) if self.reviewed else None

    def to_dict(self) -> dict:
        return {**self.__dict__, "rejection_rate": self.rejection_rate}


@dataclass
class Status:
    run: str
    total: SourceStatus
    by_source: dict[str, SourceStatus]
    agreement: Agreement
    unreadable: list[str] = field(default_factory=list)
    """Tasks in review or decided whose metadata.json could not be read (left out of reasons and agreement)."""
    waiting: dict[str, str] = field(default_factory=dict)
    """Tasks waiting for votes and their votes so far, as the last pull saw them ("1 of 2")."""
    queue: dict[str, str] = field(default_factory=dict)
    """Tasks waiting for an adjudicator, and why, as the last pull saw them."""
    disagreements: dict[str, list[str]] = field(default_factory=dict)
    """task_id -> its unresolved disagreements, with who is involved."""
    adjudicators: list[str] = field(default_factory=list)
    duplicates: dict[str, list[int]] = field(default_factory=dict)
    """task_id -> Label Studio ids of extra copies, as the last pull saw them."""
    annotators: list[AnnotatorWork] = field(default_factory=list)
    """Each annotator's work: done, pending, locked now, agreement with the final decisions."""
    vanished_votes: int = 0
    """Recorded votes that were deleted or changed author later (each sent its task to adjudication)."""
    formalizations: bool = False
    """The formalization review's state (its items are records), not the review of checked tasks."""

    @property
    def _push(self) -> str:
        return f"safeforge review push {self.run}" + (" --formalizations" if self.formalizations else "")

    def to_dict(self) -> dict:
        return {
            "run": self.run,
            "review": "formalizations" if self.formalizations else "tasks",
            "adjudicators": self.adjudicators,
            "waiting": self.waiting,
            "queue": self.queue,
            "disagreements": self.disagreements,
            "duplicates": self.duplicates,
            "vanished_votes": self.vanished_votes,
            "total": self.total.to_dict(),
            "by_source": {source: s.to_dict() for source, s in self.by_source.items()},
            "agreement": self.agreement.to_dict(),
            "annotators": [row.to_dict() for row in self.annotators],
            "unreadable": self.unreadable,
        }

    def format_table(self) -> str:
        rows = [*sorted(self.by_source.items()), ("all", self.total)]
        width = max([len("source")] + [len(name) for name, _ in rows])
        title = "Formalization review" if self.formalizations else "Review"
        lines = [f"{title} of run {self.run}", "", f"{'source':<{width}}  not pushed  pending  accepted  rejected  rejection rate"]
        for name, s in rows:
            rate = "-" if s.rejection_rate is None else f"{s.rejection_rate:.1f}%"
            lines.append(f"{name:<{width}}  {s.not_pushed:>10}  {s.pending:>7}  {s.accepted:>8}  {s.rejected:>8}  {rate:>14}")
        if self.total.reasons:
            sources = sorted(self.by_source)
            known = FORMALIZATION_REJECTION_REASONS if self.formalizations else REJECTION_REASONS
            labels = {code: known.get(code, "(no reason given)") for code in self.total.reasons}
            label_width = max(len(label) for label in labels.values())
            lines += [
                "",
                "Rejection reasons (rejected tasks giving each; a task may give several)",
                f"{'reason':<{label_width}}  " + "  ".join(f"{s:>{max(len(s), 3)}}" for s in sources) + "  all",
            ]
            for code in sorted(self.total.reasons, key=lambda c: -self.total.reasons[c]):
                counts = "  ".join(f"{self.by_source[s].reasons.get(code, 0):>{max(len(s), 3)}}" for s in sources)
                lines.append(f"{labels[code]:<{label_width}}  {counts}  {self.total.reasons[code]:>3}")
        lines += ["", *self.agreement.lines()]
        if self.annotators:
            lines += ["", *workload_lines(self.annotators)]
        lines += [
            "",
            f"Adjudicators: {', '.join(self.adjudicators) or f'none named (`{self._push} --adjudicator EMAIL`)'}",
        ]
        if self.vanished_votes:
            lines += [f"Vanished votes: {self.vanished_votes} recorded vote(s) deleted or changed author later (see the disagreements)"]
        if self.queue:
            lines += ["Adjudication queue (the view 'Adjudication queue' in Label Studio)"]
            lines += [f"  {task_id}: {why}" for task_id, why in sorted(self.queue.items())]
        if self.disagreements:
            lines += ["", "Unresolved disagreements"]
            lines += [f"  {task_id}: {text}" for task_id, texts in sorted(self.disagreements.items()) for text in texts]
        if self.waiting:
            lines += ["", "Waiting for votes (votes so far, at the last pull)"]
            lines += [f"  {task_id}: {votes}" for task_id, votes in sorted(self.waiting.items())]
        lines += [
            f"duplicate: {task_id} has {len(ids)} extra copy(ies) in the project (Label Studio ids "
            f"{', '.join(map(str, ids))}; their votes count for the task): `{self._push} --remove-duplicates` merges them"
            for task_id, ids in sorted(self.duplicates.items())
        ]
        lines += [f"unreadable: {task_id}" for task_id in self.unreadable]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """The review's state in Markdown (for the run's Prefect artifact)."""
        t = self.total
        rate = "n/a" if t.rejection_rate is None else f"{t.rejection_rate:.1f}%"
        parts = [
            "## Formalization review (before code generation)" if self.formalizations else "## Review",
            f"{t.accepted} accepted, {t.rejected} rejected (rejection rate {rate}), {t.pending} in review "
            f"({len(self.queue)} waiting for an adjudicator), {t.not_pushed} not pushed. "
            f"Adjudicators: {', '.join(self.adjudicators) or 'none named'}."
            + (f" {self.vanished_votes} recorded vote(s) deleted or changed author later." if self.vanished_votes else ""),
            "### Agreement",
            self.agreement.to_markdown(),
        ]
        if self.annotators:
            parts += ["### Annotators", workload_markdown(self.annotators)]
        if self.queue:
            parts += ["### Adjudication queue", "\n".join(f"- `{task_id}`: {why}" for task_id, why in sorted(self.queue.items()))]
        if self.disagreements:
            parts += [
                "### Unresolved disagreements",
                "\n".join(f"- `{task_id}`: {text}" for task_id, texts in sorted(self.disagreements.items()) for text in texts),
            ]
        return "\n\n".join(parts)


def review_status(store: RunStore, formalizations: bool = False, data_dir: Path | None = None) -> Status:
    """The run's review state (see the module docstring); `data_dir`: the Label Studio server's, to
    read the task locks it holds now."""
    if formalizations:
        return _formalization_status(store)
    total = SourceStatus()
    by_source: dict[str, SourceStatus] = {}
    unreadable: list[str] = []
    tasks: dict[str, TaskVotes] = {}
    task_ids: dict[str, str] = {}
    in_review: set[str] = set()
    vanished = 0
    for state, column in _COLUMNS:
        for row in store.ledger.records(state=state):
            source = by_source.setdefault(row.source, SourceStatus())
            _count(column, source, total)
            task_id = task_ids[row.record_id] = row.task_id or row.record_id
            if state == "in_review":
                in_review.add(task_id)
            elif state == "checked":
                continue
            try:
                review = read_metadata(store.task_dir(task_id)).review
            except TaskError:
                unreadable.append(task_id)
                continue
            if review is None:
                if state != "in_review":  # a task in review may have no vote yet
                    unreadable.append(task_id)
                continue
            tasks[task_id] = votes_of(review)
            vanished += len(review.vanished_votes)
            if state == "rejected_by_review":
                _count_reasons(review.reasons, source, total)
    mapping = ReviewMapping.load(store)
    status = _status(store, mapping, in_review, task_ids, (total, by_source, list(tasks.values())))
    status.unreadable, status.vanished_votes = unreadable, vanished
    queue = set(mapping.queue) & in_review
    locks = _locks(mapping, data_dir)
    status.annotators = workload(tasks, in_review - queue, queue, mapping.adjudicators, status.agreement, locks)
    return status


def _locks(mapping: ReviewMapping, data_dir: Path | None) -> dict[str, list[str]] | None:
    """Annotator -> the run's task ids they hold open now; None when not known."""
    if data_dir is None or mapping.project_id is None:
        return None
    held = held_locks(data_dir, mapping.project_id)
    if held is None:
        return None
    by_ls_id = {link.ls_task_id: task_id for task_id, link in mapping.tasks.items()}
    return {who: [by_ls_id[i] for i in ids if i in by_ls_id] for who, ids in held.items()}


def _formalization_status(store: RunStore) -> Status:
    """The formalization review's state: waiting records (pushed or not), and the verdicts."""
    mapping = ReviewMapping.load(store, FORMALIZATION_MAPPING_FILE)
    total = SourceStatus()
    by_source: dict[str, SourceStatus] = {}
    tasks: list[TaskVotes] = []
    waiting: set[str] = set()
    for row in store.ledger.records():
        review = formalization_review(store, row.record_id)
        decision = review.get("decision") if review else None
        if row.state == AWAITING:
            waiting.add(row.record_id)
            column = "pending" if row.record_id in mapping.tasks else "not_pushed"
        elif decision in ("accepted", "rejected"):
            column = str(decision)
        else:
            continue
        source = by_source.setdefault(row.source, SourceStatus())
        _count(column, source, total)
        if review is not None:
            tasks.append(votes_from(review.get("annotations", []), decision))
            if decision == "rejected":
                _count_reasons(review.get("reasons", []), source, total)
    return _status(store, mapping, waiting, {}, (total, by_source, tasks), formalizations=True)


def _count(column: str, *buckets: SourceStatus) -> None:
    for bucket in buckets:
        setattr(bucket, column, getattr(bucket, column) + 1)


def _count_reasons(reasons: list[str], *buckets: SourceStatus) -> None:
    for reason in reasons or [NO_REASON]:
        for bucket in buckets:
            bucket.reasons[reason] = bucket.reasons.get(reason, 0) + 1


def _status(
    store: RunStore,
    mapping: ReviewMapping,
    open_ids: set[str],
    task_ids: dict[str, str],
    counted: tuple[SourceStatus, dict[str, SourceStatus], list[TaskVotes]],
    formalizations: bool = False,
) -> Status:
    """The status from what was `counted` (in all, by source, the votes of every item) and what the
    last pull kept (`open_ids`: the items still under review; `task_ids`: record_id -> task_id where
    they differ): waiting, queue, open disagreements, adjudicators, duplicates."""
    review = "formalizations" if formalizations else "tasks"
    open_disagreements = {
        task_ids.get(record_id, record_id): [f"{d['summary']} ({', '.join(d.get('annotators', []))})" for d in entries]
        for record_id, entries in store.ledger.disagreements(open_only=True, review=review).items()
    }
    total, by_source, votes = counted
    return Status(
        store.name,
        total,
        by_source,
        agreement(votes),
        waiting={item: votes for item, votes in mapping.progress.items() if item in open_ids and item not in mapping.queue},
        queue={item: why for item, why in mapping.queue.items() if item in open_ids},
        disagreements=open_disagreements,
        adjudicators=mapping.adjudicators,
        duplicates=mapping.duplicates,
        formalizations=formalizations,
    )
