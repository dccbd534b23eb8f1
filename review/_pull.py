"""`pull_run`: bring reviewers' votes back from Label Studio into the run.

Every pull reads every submitted annotation of the run's project (skipped ones and ones without an
accept/reject choice do not count; votes on a duplicate copy of a task count for the task) and
decides each pushed task by the rule in `_decide`, with the run's named adjudicators and the votes
the task needs (Label Studio's overlap for it).

For every task with a vote, metadata.json gets a review block: the decision or what the task waits
for, every counted annotation, the disagreements found (kept after they are resolved, with how),
the task's own agreement; a decision applies the reviewers' corrections to the formalization with
provenance (a task that goes back to waiting has its original text again). The disagreements are
kept in the ledger too. Records move in_review -> accepted | rejected_by_review; a decided task
whose decision changes moves between those two, and one that now waits (it needs more votes, or an
adjudicator) goes back to in_review; each transition has its reason. Everything is read and checked
before anything is written: with the server down, a refused token, or a deleted project or task,
nothing in the run changes. Pulling again when nothing changed writes nothing.

Last, the pull marks the adjudication queue in Label Studio (`_marks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from safeforge.review._agreement import Agreement, agreement, task_agreement, votes_of
from safeforge.review._annotations import ReviewAnnotation
from safeforge.review._client import LabelStudioClient, RemoteTask, copies_by_task, extra_copies
from safeforge.review._config import ReviewConfig
from safeforge.review._decide import Found, Outcome, ReviewRules, changed_fields, decide
from safeforge.review._errors import NotFoundError, ReviewError
from safeforge.review._mapping import ReviewMapping
from safeforge.review._marks import mark_queue, queue_reason
from safeforge.review._task_data import CORRECTABLE_FIELDS, REJECTION_REASONS, field_text
from safeforge.runs.ledger import RecordRow, RunStore
from safeforge.runs.lock import RunLock
from safeforge.task.files import METADATA, TaskError, read_metadata
from safeforge.task.metadata import DangerFormalization, Disagreement, Review, TaskMetadata, VanishedVote
from safeforge.task.writer import write_metadata

DECIDED = ("accepted", "rejected_by_review")
_ENDED = {  # how a disagreement that no longer holds ended, without an adjudication
    "votes": "the votes now agree",
    "corrections": "the corrections now agree",
    "edited_vote": "saved again by its author, or removed",
    "ignored_adjudication": "the adjudication was withdrawn, or its author may now adjudicate",
}


@dataclass
class PullResult:
    """What a pull found and recorded."""

    url: str
    project_id: int
    accepted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    """Task ids still in review (waiting for votes or for an adjudicator)."""
    progress: dict[str, str] = field(default_factory=dict)
    """task_id -> "1 of 2": the annotators who voted, of those the task needs."""
    queue: dict[str, str] = field(default_factory=dict)
    """task_id -> why it waits for an adjudicator (the adjudication queue)."""
    changed: list[str] = field(default_factory=list)
    """Decided tasks whose decision a later or edited annotation changed (a recorded transition)."""
    reopened: dict[str, str] = field(default_factory=dict)
    """Decided tasks that went back to in_review, and why."""
    disagreements: dict[str, list[str]] = field(default_factory=dict)
    """task_id -> its unresolved disagreements, with who is involved."""
    resolved: list[str] = field(default_factory=list)
    """Disagreements this pull found resolved."""
    flags: list[str] = field(default_factory=list)
    """Duplicate copies of tasks in the project."""
    warnings: list[str] = field(default_factory=list)
    annotations: int = 0
    corrections: int = 0
    agreement: Agreement | None = None
    failed: dict[str, str] = field(default_factory=dict)
    """task_id -> why its review could not be recorded (it stays as it was)."""

    def to_dict(self) -> dict:
        data = dict(self.__dict__)
        data["agreement"] = self.agreement.to_dict() if self.agreement else None
        return data

    def summary(self) -> str:
        return "\n".join([*self.head(), *self.details()])

    def head(self) -> list[str]:
        """The summary's first lines: what was read, and what was decided."""
        return [
            f"project {self.project_id} at {self.url}: read {self.annotations} annotation(s)",
            f"accepted {len(self.accepted)}, rejected {len(self.rejected)}, still pending "
            f"{len(self.pending)}; {self.corrections} correction(s) applied",
        ]

    def details(self) -> list[str]:
        """The summary's other lines: agreement, what waits and why, disagreements, problems."""
        lines: list[str] = []
        if self.agreement:
            lines += self.agreement.lines()[:1]
        lines += [
            f"still in review: {task_id} ({self.progress.get(task_id, '?')} votes)" for task_id in self.pending if task_id not in self.queue
        ]
        lines += [f"needs adjudication: {task_id}: {why}" for task_id, why in sorted(self.queue.items())]
        lines += [f"decision changed: {task_id}" for task_id in self.changed]
        lines += [f"re-opened: {task_id}: {why}" for task_id, why in sorted(self.reopened.items())]
        lines += [f"disagreement: {task_id}: {text}" for task_id, texts in sorted(self.disagreements.items()) for text in texts]
        lines += [f"resolved: {text}" for text in self.resolved]
        lines += [f"flag: {flag}" for flag in self.flags]
        lines += [f"warning: {warning}" for warning in self.warnings]
        lines += [f"error: {task_id}: {reason}" for task_id, reason in sorted(self.failed.items())]
        return lines


@dataclass
class _Task:
    """One pushed task, read and decided, before anything is written."""

    row: RecordRow
    task_id: str
    remote: RemoteTask
    metadata: TaskMetadata
    original: dict[str, str]
    """The formalization fields' texts before any correction."""
    annotations: list[ReviewAnnotation]
    outcome: Outcome
    vanished: list[VanishedVote]
    """Every vote recorded before that was deleted or changed author since (earlier pulls' and new ones)."""


def pull_run(store: RunStore, client_config: ReviewConfig) -> PullResult:
    """Record the decisions of the run's pushed tasks (see the module docstring), holding the run's
    lock (one writer per run)."""
    with RunLock(store.root, "review pull"):
        return pull_locked(store, client_config)


def pull_locked(store: RunStore, client_config: ReviewConfig) -> PullResult:
    """`pull_run` for a caller that holds the run's lock already (a push that changed the rules)."""
    mapping = ReviewMapping.load(store)
    push = f"safeforge review push {store.name}"
    if mapping.project_id is None:
        raise ReviewError(f"run {store.name} has not been pushed to Label Studio: run `{push}` first")
    with LabelStudioClient(client_config) as client:
        remote, users = read_project(client, mapping, push, "the tasks in review")
        in_review = store.ledger.records(state="in_review")
        missing = [row for row in in_review if _task_id(row) not in mapping.tasks or mapping.tasks[_task_id(row)].ls_task_id not in remote]
        if missing:
            names = ", ".join(_task_id(row) for row in missing[:10]) + (" ..." if len(missing) > 10 else "")
            raise ReviewError(
                f"{len(missing)} task(s) in review are missing from Label Studio project {mapping.project_id} at "
                f"{client_config.url} (deleted there?): {names}; nothing was changed in the run. Run `safeforge "
                f"review push {store.name} --reimport-missing` to import them again."
            )
        result = PullResult(client_config.url, mapping.project_id)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        tasks = _read(store, mapping, remote, users, result, now)
        reviews = [review for task in tasks if (review := _record(store, task, mapping.project_id, now, result))]
        result.agreement = agreement(votes_of(review) for review in reviews)
        keep_last_pull(store, mapping, remote, result, push)
        result.warnings += mark_queue(
            client, mapping.project_id, [(task.remote, task.annotations, task.outcome, task.original) for task in tasks]
        )
    return result


def keep_last_pull(store: RunStore, mapping: ReviewMapping, remote: dict[int, RemoteTask], result: PullResult, push: str) -> None:
    """Flag the duplicate copies of tasks in the project (`push`: the push command that merges
    them), and keep in the mapping what this pull saw (progress, queue, duplicates) when it changed."""
    duplicates = extra_copies(remote.values())
    result.flags += [
        f"{task_id} is in project {mapping.project_id} {len(ids) + 1} times (Label Studio ids {', '.join(map(str, ids))} "
        f"are extra; their votes count for the task): `{push} --remove-duplicates` merges them"
        for task_id, ids in sorted(duplicates.items())
    ]
    if (result.progress, result.queue, duplicates) != (mapping.progress, mapping.queue, mapping.duplicates):
        mapping.progress, mapping.queue, mapping.duplicates = result.progress, result.queue, duplicates
        mapping.save(store)


def read_project(client: LabelStudioClient, mapping: ReviewMapping, push: str, what: str) -> tuple[dict[int, RemoteTask], dict[int, str]]:
    """Every task of the mapped project (by Label Studio id) with its annotations, and the users'
    e-mails. ReviewError when the project was deleted, saying to run `push` with --reimport-missing,
    which imports `what` again."""
    assert mapping.project_id is not None
    client.whoami()
    try:
        client.project(mapping.project_id)
    except NotFoundError:
        raise ReviewError(
            f"Label Studio project {mapping.project_id} ({mapping.project_title!r}) no longer exists at {client.config.url} "
            f"(deleted?); nothing was changed in the run. Run `{push} --reimport-missing` to create it again and import {what}."
        ) from None
    return {task.id: task for task in client.tasks(mapping.project_id, with_annotations=True)}, client.user_emails()


def _task_id(row: RecordRow) -> str:
    return row.task_id or row.record_id


def _read(
    store: RunStore, mapping: ReviewMapping, remote: dict[int, RemoteTask], users: dict[int, str], result: PullResult, now: str
) -> list[_Task]:
    """Every pushed task of the run with its annotations (from every copy) and its outcome."""
    copies = copies_by_task(remote.values())
    adjudicators = frozenset(a.lower() for a in mapping.adjudicators)
    tasks = []
    for row in [*store.ledger.records(state="in_review"), *(row for state in DECIDED for row in store.ledger.records(state=state))]:
        task_id = _task_id(row)
        link = mapping.tasks.get(task_id)
        if link is None or link.ls_task_id not in remote:
            continue
        primary = remote[link.ls_task_id]
        raw = [a for copy in copies.get(task_id, [primary]) for a in copy.annotations if not a.get("was_cancelled")]
        annotations = [ReviewAnnotation.from_label_studio(a, users) for a in raw]
        result.annotations += len(annotations)
        folder = store.task_dir(task_id)
        try:
            metadata = read_metadata(folder)
            if metadata.danger_formalization is None:
                raise TaskError(f"{folder / METADATA}: no danger_formalization object")
        except TaskError as exc:
            result.failed[task_id] = f"cannot record the review: {exc}"
            continue
        formalization = _original_formalization(metadata)
        original = {name: field_text(formalization, name) for name in CORRECTABLE_FIELDS}
        vanished = vanished_votes(metadata.review, annotations, now)
        outcome = decide(annotations, ReviewRules(required=primary.overlap, adjudicators=adjudicators), original, vanished)
        tasks.append(_Task(row, task_id, primary, metadata, original, annotations, outcome, vanished))
    return tasks


def vanished_votes(before: Review | None, annotations: list[ReviewAnnotation], now: str) -> list[VanishedVote]:
    """The votes the last pull recorded (`before`) that Label Studio no longer holds as their
    author's (deleted, no longer a vote, or saved by another user), after those recorded before
    (the record is append-only). A vote `--remove-duplicates` moved continues as its copy."""
    if before is None:
        return []
    known = list(before.vanished_votes)
    seen = {vote.annotation_id for vote in known}
    current = {a.id: a for a in annotations if a.counts} | {a.import_id: a for a in annotations if a.counts and a.import_id is not None}
    for entry in before.annotations:
        if entry["id"] in seen:
            continue
        now_voting = current.get(entry["id"])
        if now_voting is not None and now_voting.annotator in (entry["annotator"], entry.get("author")):
            continue  # still its voter's, or its author saved it again
        known.append(
            VanishedVote(
                annotation_id=entry["id"],
                annotator=entry["annotator"],
                decision=entry.get("decision"),
                reasons=entry.get("reasons", []),
                voted_at=entry.get("updated_at") or entry.get("created_at") or "",
                what="deleted" if now_voting is None else "author_changed",
                now_annotator=None if now_voting is None else now_voting.annotator,
                noticed_at=now,
            )
        )
    return known


def _original_formalization(metadata: TaskMetadata) -> dict:
    """The formalization as it was before the corrections an earlier pull applied."""
    assert metadata.danger_formalization is not None
    formalization = metadata.danger_formalization.model_dump()
    for correction in reversed(metadata.review.corrections if metadata.review else []):
        formalization[correction["field"]] = correction["old"]
    return formalization


def _record(store: RunStore, task: _Task, project_id: int, now: str, result: PullResult) -> Review | None:
    """Write one task's review (metadata, ledger) when it changed, and move its record; returns the
    review (None for a task nobody voted on yet)."""
    outcome, row = task.outcome, task.row
    before = task.metadata.review
    if before is None and not outcome.votes and outcome.adjudication is None and row.state == "in_review":
        result.pending.append(task.task_id)  # nothing voted yet: nothing to record
        result.progress[task.task_id] = outcome.progress
        return None
    review, formalization, applied = _review(task, project_id, now)
    note_disagreements(result, task.task_id, review.disagreements, now)
    if before is None or _comparable(before) != _comparable(review):
        try:
            write_metadata(
                store.task_dir(task.task_id),
                task.metadata.model_copy(
                    update={"danger_formalization": DangerFormalization.model_validate(formalization), "review": review}
                ),
            )
        except (OSError, ValueError) as exc:
            result.failed[task.task_id] = f"{store.task_dir(task.task_id) / METADATA}: cannot record the review: {exc}"
            return review
        result.corrections += applied
    store.ledger.set_disagreements(row.record_id, [d.model_dump(mode="json", exclude_none=True) for d in review.disagreements])
    _move(store, task, result)
    return review


def note_disagreements(result: PullResult, task_id: str, disagreements: list[Disagreement], now: str) -> None:
    """Tell in the result a task's open disagreements and those this pull (at `now`) found resolved."""
    for entry in disagreements:
        if entry.resolved_at is None:
            result.disagreements.setdefault(task_id, []).append(f"{entry.summary} ({', '.join(entry.annotators)})")
        elif entry.resolved_at == now:
            result.resolved.append(f"{task_id}: {entry.summary}: {entry.resolution}")


def _move(store: RunStore, task: _Task, result: PullResult) -> None:
    outcome, row, task_id = task.outcome, task.row, task.task_id
    detail: dict[str, object] = {"ls_task_id": task.remote.id}
    decision = outcome.decision
    if decision is None:
        result.pending.append(task_id)
        result.progress[task_id] = outcome.progress
        if outcome.waiting_for == "adjudication":
            result.queue[task_id] = queue_reason(outcome)
        if row.state in DECIDED:
            store.ledger.transition(row.record_id, "in_review", f"review re-opened: {outcome.explanation}", detail=detail)
            result.reopened[task_id] = outcome.explanation
        return
    state = "accepted" if decision.decision == "accepted" else "rejected_by_review"
    detail = {**detail, "rule": decision.rule, **({"reasons": decision.reasons} if state == "rejected_by_review" else {})}
    if row.state == state:
        return
    if row.state in DECIDED:
        store.ledger.transition(row.record_id, state, f"review changed: {decision.explanation}", detail=detail)
        result.changed.append(task_id)
        return
    reason = (
        f"review: {decision.explanation}"
        if state == "accepted"
        else rejection_reason(decision.reasons, decision.notes, decision.explanation)
    )
    store.ledger.transition(row.record_id, state, reason, detail=detail)
    (result.accepted if state == "accepted" else result.rejected).append(task_id)


def _comparable(review: Review) -> dict:
    return review.model_dump(mode="json", exclude={"pulled_at"}, exclude_none=True)


def rejection_reason(
    reasons: list[str], notes: list[str], explanation: str, labels: Mapping[str, str] = REJECTION_REASONS, stage: str = "review"
) -> str:
    """The ledger's reason of a rejection: the reasons' labels, who decided, the notes."""
    text = f"{stage}: {', '.join(labels.get(r, r).lower() for r in reasons) or 'no reason given'} ({explanation})"
    if notes:
        text += "; note: " + " | ".join(" ".join(note.split()) for note in notes)
    return text


def _review(task: _Task, project_id: int, now: str) -> tuple[Review, dict, int]:
    """The task's review block, its formalization with the decision's corrections applied, and how
    many corrections those are."""
    outcome = task.outcome
    formalization = _original_formalization(task.metadata)
    corrections = apply_corrections(outcome, task.original, formalization) if outcome.decision is not None else []
    decision = outcome.decision
    history = task.metadata.review.disagreements if task.metadata.review else []
    review = Review(
        decision=None if decision is None else decision.decision,
        final_rule=None if decision is None else decision.rule,
        waiting_for=outcome.waiting_for,
        votes=outcome.progress,
        explanation=outcome.explanation,
        reasons=decision.reasons if decision else [],
        annotations=[annotation_entry(a, outcome, task.original) for a in sorted(task.annotations, key=lambda a: a.order) if a.counts],
        agreement=task_agreement(outcome.votes),
        corrections=corrections,
        disagreements=merge_disagreements(history, outcome.disagreements, outcome.adjudication, now),
        vanished_votes=task.vanished,
        label_studio={"project_id": project_id, "task_id": task.remote.id},
        pulled_at=now,
    )
    return review, formalization, len(corrections)


def apply_corrections(outcome: Outcome, original: dict[str, str], formalization: dict) -> list[dict]:
    """Apply to `formalization` (in place) the corrections of the annotations that decide, in order
    (a later one stands); returns them with their provenance."""
    corrections = []
    for annotation in outcome.applied:
        for name, new_value in changed_fields(annotation, original).items():
            corrections.append(
                {
                    "field": name,
                    "old": formalization.get(name),
                    "new": new_value,
                    "annotator": annotation.annotator,
                    "at": annotation.updated_at or annotation.created_at,
                    "annotation_id": annotation.id,
                }
            )
            formalization[name] = new_value
    return corrections


def annotation_entry(annotation: ReviewAnnotation, outcome: Outcome, original: dict[str, str]) -> dict:
    entry: dict = {
        "id": annotation.id,
        "annotator": annotation.annotator,
        "decision": annotation.decision,
        "reasons": annotation.reasons,
        "note": annotation.note,
        "adjudicating": annotation.adjudicating,
        "corrections": changed_fields(annotation, original),
        "created_at": annotation.created_at,
        "updated_at": annotation.updated_at,
        "lead_time": annotation.lead_time,
    }
    if annotation.edited_by_other:
        entry["author"] = annotation.author
    if annotation.id in outcome.ignored:
        entry["ignored_adjudication"] = outcome.ignored[annotation.id]
    return entry


def merge_disagreements(
    history: list[Disagreement], found: list[Found], adjudication: ReviewAnnotation | None, now: str
) -> list[Disagreement]:
    """The task's disagreements after this pull: those found now (still open, or resolved by the
    adjudication), those recorded before and resolved (kept), and those recorded open that no longer
    hold (resolved now)."""
    closed = [d for d in history if d.resolved_at is not None]
    still_open = {d.key: d for d in history if d.resolved_at is None}
    settled_by = adjudication.annotator if adjudication else None
    merged = list(closed)
    for item in found:
        earlier = still_open.pop(item.key, None)
        if earlier is None and settled_by and any(d.key == item.key and d.resolved_by == settled_by for d in closed):
            continue  # recorded already, as settled by this adjudicator
        entry = Disagreement(
            kind=item.kind,
            key=item.key,
            summary=item.summary,
            annotators=list(item.annotators),
            annotation_ids=list(item.annotation_ids),
            field=item.field,
            found_at=earlier.found_at if earlier else now,
        )
        if settled_by:
            entry = entry.model_copy(update={"resolved_at": now, "resolution": "adjudicated", "resolved_by": settled_by})
        merged.append(entry)
    for entry in still_open.values():
        resolution = {"resolution": "adjudicated", "resolved_by": settled_by} if settled_by else {"resolution": _ENDED[entry.kind]}
        merged.append(entry.model_copy(update={"resolved_at": now, **resolution}))
    return sorted(merged, key=lambda d: (d.found_at, d.key))
