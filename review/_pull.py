"""`pull_run`: bring reviewers' decisions back from Label Studio into the run.

The final decision of a task, from its submitted annotations (skipped ones and ones without an
accept/reject choice do not count):
1. an adjudicating annotation (the "I adjudicate" box) decides: the latest one wins ("adjudicated");
2. otherwise a reject stands: one reject among the annotators rejects the task ("reject_stands");
3. otherwise the task is accepted ("unanimous"; "single" with one annotator).
A task without a counted annotation stays in review (pending).

For each decided task, metadata.json gets a "review" block (decision, rule, final reasons, every
annotation with its annotator, time and lead time, agreement) and the reviewers' corrections to
the danger formalization, each recorded with the old and new text, annotator and time under
review.corrections (later annotations win; an adjudicator's last). The record then moves to
`accepted` or `rejected_by_review` with the reasons and notes. Everything is read and checked
before anything is written: with the server down, a refused token, or a deleted project or task,
nothing in the run changes. Pulling again is harmless.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from safeforge.review._agreement import Agreement, agreement, task_agreement
from safeforge.review._client import LabelStudioClient, RemoteProject, RemoteTask, extra_copies
from safeforge.review._config import ReviewConfig
from safeforge.review._errors import NotFoundError, ReviewError
from safeforge.review._mapping import ReviewMapping
from safeforge.review._task_data import CORRECTABLE_FIELDS, REJECTION_REASONS, field_text
from safeforge.runs.ledger import RecordRow, RunStore
from safeforge.runs.lock import RunLock
from safeforge.task.files import METADATA, TaskError, read_metadata
from safeforge.task.metadata import DangerFormalization, Review, TaskMetadata
from safeforge.task.writer import write_metadata

# A reason as stored in a result (its alias), or its label should a result hold that instead.
_REASON_CODES = {**{label: code for code, label in REJECTION_REASONS.items()}, **{c: c for c in REJECTION_REASONS}}


@dataclass
class ReviewAnnotation:
    """One reviewer's submitted annotation of a task."""

    id: int
    annotator: str
    decision: str | None
    reasons: list[str]
    note: str
    adjudicating: bool
    fields: dict[str, str]
    """Text of the correction boxes, by formalization field (as submitted, possibly unchanged)."""
    created_at: str
    lead_time: float | None
    updated_at: str = ""
    edited_by_other: str = ""
    """Set when another user changed this annotation (Label Studio's updated_by): the vote is theirs."""

    @classmethod
    def from_label_studio(cls, raw: dict, users: dict[int, str]) -> ReviewAnnotation:
        values: dict[str, list] = {}
        for item in raw.get("result") or []:
            value = item.get("value") or {}
            values[item.get("from_name", "")] = value.get("choices") or value.get("text") or []
        completed_by = raw.get("completed_by")
        creator_id = completed_by.get("id") if isinstance(completed_by, dict) else completed_by
        updated_by = raw.get("updated_by")
        updater_id = updated_by.get("id") if isinstance(updated_by, dict) else updated_by
        user_id = updater_id if isinstance(updater_id, int) else creator_id  # the vote is whoever made it last

        def name(uid) -> str:
            return users.get(uid, f"user {uid}") if isinstance(uid, int) else f"user {uid}"

        decision = next((c.lower() for c in values.get("decision", []) if c.lower() in ("accept", "reject")), None)
        return cls(
            id=int(raw["id"]),
            annotator=name(user_id),
            decision=decision,
            reasons=[_REASON_CODES[r] for r in values.get("reasons", []) if r in _REASON_CODES],
            note="\n".join(str(t) for t in values.get("note", [])).strip(),
            adjudicating=bool(values.get("adjudication")),
            fields={name: "\n".join(str(t) for t in values[f"fix_{name}"]) for name in CORRECTABLE_FIELDS if f"fix_{name}" in values},
            created_at=str(raw.get("created_at") or ""),
            lead_time=raw.get("lead_time"),
            updated_at=str(raw.get("updated_at") or raw.get("created_at") or ""),
            edited_by_other=(
                f"annotation {raw['id']} of {name(creator_id)} was changed by {name(updater_id)}; counted as {name(updater_id)}'s vote"
                if isinstance(updater_id, int) and isinstance(creator_id, int) and updater_id != creator_id
                else ""
            ),
        )

    @property
    def counts(self) -> bool:
        return self.decision is not None


@dataclass(frozen=True)
class Decision:
    decision: str
    """"accepted" or "rejected"."""
    rule: str
    """"single", "unanimous", "reject_stands" or "adjudicated"."""
    reasons: list[str]
    notes: list[str]
    explanation: str


def voters(annotations: list[ReviewAnnotation]) -> int:
    """How many different annotators have voted (adjudications are not votes)."""
    return len({a.annotator for a in annotations if a.counts and not a.adjudicating})


def final_decision(annotations: list[ReviewAnnotation], required: int = 1) -> Decision | None:
    """The documented rule (module docstring); None while fewer than `required` annotators have
    voted and no adjudicator has decided."""
    counted = sorted((a for a in annotations if a.counts), key=lambda a: (a.created_at, a.id))
    if not counted or (voters(annotations) < required and not any(a.adjudicating for a in counted)):
        return None
    adjudications = [a for a in counted if a.adjudicating]
    if adjudications:
        final = adjudications[-1]
        decision = "accepted" if final.decision == "accept" else "rejected"
        return Decision(
            decision,
            "adjudicated",
            final.reasons if decision == "rejected" else [],
            [final.note] if final.note else [],
            f"adjudicated by {final.annotator}",
        )
    rejects = [a for a in counted if a.decision == "reject"]
    if rejects:
        reasons = list(dict.fromkeys(r for a in rejects for r in a.reasons))
        rule = "single" if len(counted) == 1 else "reject_stands"
        explanation = (
            f"rejected by {rejects[0].annotator}"
            if rule == "single"
            else f"{len(rejects)} of {len(counted)} annotators rejected; a reject stands without an adjudicating accept"
        )
        return Decision("rejected", rule, reasons, [a.note for a in rejects if a.note], explanation)
    rule = "single" if len(counted) == 1 else "unanimous"
    explanation = f"accepted by {counted[0].annotator}" if rule == "single" else f"all {len(counted)} annotators accepted"
    return Decision("accepted", rule, [], [a.note for a in counted if a.note], explanation)


def _independent_votes(annotations: list[ReviewAnnotation]) -> dict[str, str]:
    """annotator -> their latest non-adjudicating decision."""
    votes: dict[str, str] = {}
    for a in sorted(annotations, key=lambda a: (a.created_at, a.id)):
        if a.counts and not a.adjudicating and a.decision is not None:
            votes[a.annotator] = a.decision
    return votes


@dataclass
class PullResult:
    """What a pull found and recorded."""

    url: str
    project_id: int
    accepted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    """Task ids still in review (not enough annotators yet)."""
    progress: dict[str, str] = field(default_factory=dict)
    """task_id -> "1 of 2": the annotators who voted, of those the project requires."""
    changed: list[str] = field(default_factory=list)
    """Decided tasks whose decision a later or edited annotation changed (a recorded transition)."""
    flags: list[str] = field(default_factory=list)
    """Annotations another user edited (their vote counts as the editor's)."""
    annotations: int = 0
    corrections: int = 0
    agreement: Agreement | None = None
    failed: dict[str, str] = field(default_factory=dict)
    """task_id -> why its decision could not be recorded (it stays in review)."""

    def to_dict(self) -> dict:
        data = dict(self.__dict__)
        data["agreement"] = self.agreement.to_dict() if self.agreement else None
        return data

    def summary(self) -> str:
        lines = [
            f"project {self.project_id} at {self.url}: read {self.annotations} annotation(s)",
            f"accepted {len(self.accepted)}, rejected {len(self.rejected)}, still pending "
            f"{len(self.pending)}; {self.corrections} correction(s) applied",
        ]
        if self.agreement:
            kappa = "n/a" if self.agreement.cohen_kappa is None else f"{self.agreement.cohen_kappa:.3f}"
            lines.append(
                f"agreement over {self.agreement.tasks} task(s) with 2+ annotators: {self.agreement.percent:.1f}%, Cohen's kappa {kappa}"
            )
        lines += [f"still in review: {task_id} ({self.progress.get(task_id, '?')} annotators)" for task_id in self.pending]
        lines += [f"decision changed: {task_id}" for task_id in self.changed]
        lines += [f"flag: {flag}" for flag in self.flags]
        lines += [f"error: {task_id}: {reason}" for task_id, reason in sorted(self.failed.items())]
        return "\n".join(lines)


def pull_run(store: RunStore, client_config: ReviewConfig) -> PullResult:
    """Record the decisions of the run's tasks in review (see the module docstring), holding the
    run's lock (one writer per run)."""
    with RunLock(store.root, "review pull"):
        return _pull(store, client_config)


def _pull(store: RunStore, client_config: ReviewConfig) -> PullResult:
    mapping = ReviewMapping.load(store)
    if mapping.project_id is None:
        raise ReviewError(f"run {store.name} has not been pushed to Label Studio: run `safeforge review push {store.name}` first")
    with LabelStudioClient(client_config) as client:
        client.whoami()
        try:
            project = client.project(mapping.project_id)
        except NotFoundError:
            raise ReviewError(
                f"Label Studio project {mapping.project_id} ({mapping.project_title!r}) of run {store.name} no "
                f"longer exists at {client_config.url} (deleted?); nothing was changed in the run. Run "
                f"`safeforge review push {store.name} --reimport-missing` to create it again and import the "
                f"tasks in review."
            ) from None
        remote = {task.id: task for task in client.tasks(mapping.project_id, with_annotations=True)}
        users = client.user_emails()
    in_review = store.ledger.records(state="in_review")
    missing = [row for row in in_review if _task_id(row) not in mapping.tasks or mapping.tasks[_task_id(row)].ls_task_id not in remote]
    if missing:
        names = ", ".join(_task_id(row) for row in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise ReviewError(
            f"{len(missing)} task(s) in review are missing from Label Studio project {mapping.project_id} at "
            f"{client_config.url} (deleted there?): {names}; nothing was changed in the run. Run `safeforge "
            f"review push {store.name} --reimport-missing` to import them again."
        )
    annotations = {
        ls_id: [ReviewAnnotation.from_label_studio(a, users) for a in task.annotations if not a.get("was_cancelled")]
        for ls_id, task in remote.items()
    }
    run_agreement = agreement({ls_id: _independent_votes(a) for ls_id, a in annotations.items()})
    result = PullResult(
        client_config.url, mapping.project_id, agreement=run_agreement, annotations=sum(len(a) for a in annotations.values())
    )
    decided = [
        row
        for state in ("accepted", "rejected_by_review")
        for row in store.ledger.records(state=state)
        if _task_id(row) in mapping.tasks and mapping.tasks[_task_id(row)].ls_task_id in remote
    ]
    for row in [*in_review, *decided]:
        link = mapping.tasks[_task_id(row)]
        task_annotations = annotations[link.ls_task_id]
        result.flags += [a.edited_by_other for a in task_annotations if a.edited_by_other]
        _record(store, row, remote[link.ls_task_id], task_annotations, run_agreement, project, result)
    duplicates = extra_copies(remote.values())
    result.flags += [
        f"{task_id} is in project {mapping.project_id} {len(ids) + 1} times (Label Studio ids {', '.join(map(str, ids))} "
        f"are extra); remove them with `safeforge review push {store.name} --remove-duplicates`"
        for task_id, ids in sorted(duplicates.items())
    ]
    if (result.progress, duplicates) != (mapping.progress, mapping.duplicates):
        mapping.progress, mapping.duplicates = result.progress, duplicates
        mapping.save(store)
    return result


def _task_id(row: RecordRow) -> str:
    return row.task_id or row.record_id


def _record(
    store: RunStore,
    row: RecordRow,
    task: RemoteTask,
    annotations: list[ReviewAnnotation],
    run_agreement: Agreement | None,
    project: RemoteProject,
    result: PullResult,
) -> None:
    """Decide one task from its annotations; a decided task is decided again when its annotations
    changed since the last pull (a changed outcome is a recorded transition)."""
    task_id = _task_id(row)
    required = project.annotators_per_task
    decision = final_decision(annotations, required)
    if decision is None:
        if row.state == "in_review":
            result.pending.append(task_id)
            result.progress[task_id] = f"{voters(annotations)} of {required}"
        return
    folder = store.task_dir(task_id)
    if row.state != "in_review" and not _changed_since_last_pull(folder, annotations):
        return
    try:
        applied, conflicts = _write_review(folder, decision, annotations, run_agreement, project.id, task.id)
        result.flags += [f"{task_id}: {conflict}" for conflict in conflicts]
    except TaskError as exc:
        result.failed[task_id] = f"cannot record the review: {exc}"
        return
    except (OSError, ValueError) as exc:
        result.failed[task_id] = f"{folder / METADATA}: cannot record the review: {exc}"
        return
    result.corrections += applied
    state = "accepted" if decision.decision == "accepted" else "rejected_by_review"
    if row.state != "in_review":
        if state != row.state:
            store.ledger.transition(
                row.record_id, state, f"review changed: {decision.explanation}", detail={"rule": decision.rule, "ls_task_id": task.id}
            )
            result.changed.append(task_id)
        return
    if decision.decision == "accepted":
        store.ledger.transition(
            row.record_id, "accepted", f"review: {decision.explanation}", detail={"rule": decision.rule, "ls_task_id": task.id}
        )
        result.accepted.append(task_id)
    else:
        store.ledger.transition(
            row.record_id,
            "rejected_by_review",
            _rejection_reason(decision),
            detail={"rule": decision.rule, "reasons": decision.reasons, "ls_task_id": task.id},
        )
        result.rejected.append(task_id)


def _signature(entries) -> list[tuple]:
    return sorted((int(e["id"]), str(e.get("updated_at") or e.get("created_at") or ""), e.get("decision")) for e in entries)


def _changed_since_last_pull(folder: Path, annotations: list[ReviewAnnotation]) -> bool:
    """Whether the task's counted annotations differ (new, removed or edited) from those recorded."""
    try:
        recorded = read_metadata(folder).review
    except TaskError:
        return True
    current = [{"id": a.id, "updated_at": a.updated_at, "decision": a.decision} for a in annotations if a.counts]
    return recorded is None or _signature(recorded.annotations) != _signature(current)


def _rejection_reason(decision: Decision) -> str:
    reasons = ", ".join(REJECTION_REASONS[r].lower() for r in decision.reasons) or "no reason given"
    text = f"review: {reasons} ({decision.explanation})"
    if decision.notes:
        text += "; note: " + " | ".join(" ".join(note.split()) for note in decision.notes)
    return text


def _write_review(
    folder: Path, decision: Decision, annotations: list[ReviewAnnotation], run_agreement: Agreement | None, project_id: int, ls_task_id: int
) -> tuple[int, list[str]]:
    """Write the review block and apply corrections; returns how many corrections were applied, and
    the conflicting ones (two annotators correcting one field differently, no adjudicator)."""
    metadata = read_metadata(folder)
    if metadata.danger_formalization is None:
        raise ValueError("no danger_formalization object")
    formalization = metadata.danger_formalization.model_dump()
    _undo_corrections(metadata, formalization)
    original = {name: field_text(formalization, name) for name in CORRECTABLE_FIELDS}
    counted = sorted((a for a in annotations if a.counts), key=lambda a: (a.created_at, a.id))
    # an adjudicator decides the corrections too: only theirs apply (keeping a box unchanged keeps the original)
    ordered = [a for a in counted if a.adjudicating] or counted
    conflicts = [] if ordered is not counted else _conflicts(counted, original)
    corrections: list[dict] = []
    changed_by: dict[int, dict[str, str]] = {}
    for annotation in ordered:
        changed_by[annotation.id] = {}
        for name, text in annotation.fields.items():
            if _normalized(text) == _normalized(original[name]):
                continue
            new_value = _field_value(name, text)
            changed_by[annotation.id][name] = new_value
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
    review = Review.model_validate(
        {
            "decision": decision.decision,
            "final_rule": decision.rule,
            "explanation": decision.explanation,
            "reasons": decision.reasons,
            "annotations": [
                {
                    "id": a.id,
                    "annotator": a.annotator,
                    "decision": a.decision,
                    "reasons": a.reasons,
                    "note": a.note,
                    "adjudicating": a.adjudicating,
                    "corrections": changed_by.get(a.id, {}),
                    "created_at": a.created_at,
                    "updated_at": a.updated_at,
                    "lead_time": a.lead_time,
                    **({"edited_by_other": a.edited_by_other} if a.edited_by_other else {}),
                }
                for a in sorted(annotations, key=lambda a: (a.created_at, a.id))
                if a.counts
            ],
            "agreement": task_agreement(_independent_votes(annotations), run_agreement),
            "corrections": corrections,
            "label_studio": {"project_id": project_id, "task_id": ls_task_id},
            "pulled_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    write_metadata(
        folder, metadata.model_copy(update={"danger_formalization": DangerFormalization.model_validate(formalization), "review": review})
    )
    return len(corrections), conflicts


def _conflicts(counted: list[ReviewAnnotation], original: dict[str, str]) -> list[str]:
    found = []
    for name in CORRECTABLE_FIELDS:
        changed = {a.annotator: _normalized(a.fields[name]) for a in counted if name in a.fields}
        changed = {who: text for who, text in changed.items() if text != _normalized(original[name])}
        if len(set(changed.values())) > 1:
            found.append(
                f"{' and '.join(sorted(changed))} corrected {name} differently; the later correction stands "
                "until an adjudicator decides (an adjudicator's boxes, changed or not, settle it)"
            )
    return found


def _undo_corrections(metadata: TaskMetadata, formalization: dict) -> None:
    """Restore the values a previous (interrupted) pull replaced, so corrections apply once."""
    earlier = metadata.review.corrections if metadata.review else []
    for correction in reversed(earlier):
        formalization[correction["field"]] = correction["old"]


def _normalized(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.strip().splitlines() if line.strip())


def _field_value(name: str, text: str) -> str:
    if name == "assumptions":  # one assumption a line, as DESPITE writes them
        return "\n".join(line.strip() for line in text.splitlines() if line.strip())
    return text.strip()
