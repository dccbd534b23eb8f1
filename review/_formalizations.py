"""The formalization review in Label Studio: the formalizations of a run's records that wait for it
(`awaiting_formalization_review`, see `safeforge.generation`) go to a project of their own, and the
verdicts come back before code generation, as DESPITE has people review formalizations.

    push_formalizations(store, config)   waiting formalizations -> the run's formalization project
    pull_formalizations(store, config)   verdicts -> accepted: the record is generated on the run's
                                         next resume (from the corrected formalization);
                                         rejected: rejected_by_formalization_review, with the reasons

The project is titled `Formalization review: <run>` and mapped in `<run>/review_formalizations.json`;
its interface is review/formalization_config.xml. It works as the review of checked tasks does
(`_push`, `_pull`, `_decide`, `_marks`): the same client, project lookup and creation (a run name is
one project, whatever folder pushes it), annotators per task and share, named adjudicators, the same
decision rule, the "Adjudication queue" view and Compare All marks, the disagreements (kept with the
record's review and in the ledger, apart from the task review's) and the agreement. A verdict is
final: the record leaves the waiting state, a later vote changes nothing, and a disagreement still
open is closed with it. While a record waits, its votes so far are kept (for `review status`).
Push and pull hold the run's lock; a pull reads everything before it writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from safeforge.generation import (
    FormalizationVerdict,
    WaitingFormalization,
    formalization_review,
    keep_formalization_review,
    record_formalization_verdict,
    waiting_formalizations,
)
from safeforge.review._agreement import agreement, task_agreement, votes_from
from safeforge.review._annotations import ReviewAnnotation
from safeforge.review._client import LabelStudioClient, RemoteTask, copies_by_task
from safeforge.review._config import ReviewConfig
from safeforge.review._decide import Decision, Outcome, ReviewRules, decide
from safeforge.review._errors import ReviewError
from safeforge.review._formalization_data import (
    FORMALIZATION_CONFIG,
    FORMALIZATION_REJECTION_REASONS,
    build_formalization_task,
    shown_formalization,
)
from safeforge.review._mapping import FORMALIZATION_MAPPING_FILE, ReviewMapping, TaskLink
from safeforge.review._marks import mark_queue, queue_reason
from safeforge.review._pull import (
    PullResult,
    annotation_entry,
    apply_corrections,
    keep_last_pull,
    merge_disagreements,
    note_disagreements,
    read_project,
    rejection_reason,
)
from safeforge.review._push import (
    Progress,
    PushResult,
    apply_adjudicators,
    apply_overlap,
    check_overlap,
    listed_after_import,
    merge_duplicates,
    open_project,
    remote_index,
    update_interface,
)
from safeforge.review._task_data import CORRECTABLE_FIELDS, field_text
from safeforge.runs.ledger import RunStore
from safeforge.runs.lock import RunLock
from safeforge.task.metadata import Disagreement

_TITLE_LIMIT = 50  # Label Studio's maximum project title length


def formalization_project_title(store: RunStore) -> str:
    return f"Formalization review: {store.name}"[:_TITLE_LIMIT]


def _push_command(store: RunStore) -> str:
    return f"safeforge review push {store.name} --formalizations"


@dataclass
class FormalizationPullResult(PullResult):
    """What a pull of the formalization review found and recorded: `accepted` records are generated
    on the run's next resume, `pending` ones still wait (for votes, or for an adjudicator: `queue`),
    `failed` ones keep waiting (why their verdict could not be recorded)."""

    not_pushed: list[str] = field(default_factory=list)
    """Waiting records not in the project (push again)."""

    def head(self) -> list[str]:
        return [
            f"formalization review: project {self.project_id} at {self.url}: read {self.annotations} annotation(s)",
            f"accepted {len(self.accepted)} (generated when the run is resumed), rejected {len(self.rejected)}, "
            f"still waiting {len(self.pending)}; {self.corrections} correction(s) applied",
        ]

    def details(self) -> list[str]:
        lines = super().details()
        if self.not_pushed:
            lines.append(f"not in the project yet (push again): {', '.join(self.not_pushed)}")
        return lines


@dataclass
class _Read:
    """One waiting formalization, read and decided, before anything is written."""

    item: WaitingFormalization
    remote: RemoteTask
    annotations: list[ReviewAnnotation]
    original: dict[str, str]
    outcome: Outcome


def push_formalizations(
    store: RunStore,
    client_config: ReviewConfig,
    *,
    annotators_per_task: int | None = None,
    overlap_share: float | None = None,
    adjudicators: list[str] | None = None,
    reimport_missing: bool = False,
    remove_duplicates: bool = False,
    batch_size: int = 50,
    progress: Progress | None = None,
) -> PushResult:
    """Import the formalizations of the run's records that wait for their review and are not in the
    run's formalization project yet, holding the run's lock. A waiting record whose formalization
    cannot be read moves to `error` with the reason; the others go on. `remove_duplicates` merges
    extra copies of a formalization as `push_run` does."""
    check_overlap(annotators_per_task, overlap_share)
    with RunLock(store.root, "review push"), LabelStudioClient(client_config) as client:
        mapping = ReviewMapping.load(store, FORMALIZATION_MAPPING_FILE)
        client.whoami()
        description = (
            f"Review of the danger formalizations of Safeforge run {store.name}, before code generation. They arrive "
            f"with `{_push_command(store)}`; verdicts are read back with `safeforge review pull {store.name} --formalizations`."
        )
        warnings: list[str] = []
        label_config = FORMALIZATION_CONFIG.read_text(encoding="utf-8")
        project, created = open_project(
            client,
            mapping,
            (formalization_project_title(store), description, _push_command(store)),
            label_config,
            annotators_per_task or 1,
            overlap_share or 1.0,
            reimport_missing,
            warnings,
        )
        result = PushResult(client_config.url, project.id, project.title, created_project=created, warnings=warnings, what="formalization")
        listed = client.tasks(project.id, with_annotations=remove_duplicates)
        update_interface(client, project, label_config, created, result, listed)
        if remove_duplicates:
            listed = merge_duplicates(client, listed, result)
        if not created:
            apply_overlap(client, project, annotators_per_task, overlap_share, result)
        apply_adjudicators(client, mapping, adjudicators, result)
        waiting, problems = waiting_formalizations(store)
        result.failed.update(problems)
        remote = remote_index(listed, project.id)
        to_import = [w for w in waiting if w.record_id not in remote]
        result.already_in_project = len(waiting) - len(to_import)
        created_ids: list[int] = []
        for start in range(0, len(to_import), batch_size):
            batch = [build_formalization_task(w) for w in to_import[start : start + batch_size]]
            created_ids += client.import_tasks(project.id, batch)
            result.imported += [task["data"]["record_id"] for task in batch]
            if progress:
                progress(min(start + batch_size, len(to_import)), len(to_import))
        if result.imported:
            listed = listed_after_import(client, project.id, created_ids, result, "formalization(s)")
        remote = remote_index(listed, project.id, result.warnings)
        mapping.url, mapping.project_id, mapping.project_title = client_config.url, project.id, project.title
        mapping.tasks = {rid: TaskLink(rid, ls_id) for rid, ls_id in remote.items()}
        mapping.save(store)
        for record_id, reason in problems.items():
            store.ledger.transition(record_id, "error", f"formalization review push: {reason}")
        result.adjudicators = mapping.adjudicators
    return result


def pull_formalizations(store: RunStore, client_config: ReviewConfig) -> FormalizationPullResult:
    """Record the verdicts on the run's waiting formalizations (see the module docstring), holding
    the run's lock."""
    with RunLock(store.root, "review pull"):
        mapping = ReviewMapping.load(store, FORMALIZATION_MAPPING_FILE)
        if mapping.project_id is None:
            raise ReviewError(f"run {store.name} has no formalization review in Label Studio: run `{_push_command(store)}` first")
        with LabelStudioClient(client_config) as client:
            remote, users = read_project(client, mapping, _push_command(store), "the waiting formalizations")
            result = FormalizationPullResult(client_config.url, mapping.project_id)
            waiting, _ = waiting_formalizations(store)  # one that cannot be read is the push's to report
            copies = copies_by_task(remote.values())
            rules = frozenset(a.lower() for a in mapping.adjudicators)
            found: list[_Read] = []
            for item in waiting:
                link = mapping.tasks.get(item.record_id)
                if link is None or link.ls_task_id not in remote:
                    result.not_pushed.append(item.record_id)
                    continue
                primary = remote[link.ls_task_id]
                found.append(_read(item, primary, copies.get(item.record_id, [primary]), users, rules, result))
            now = datetime.now(UTC).isoformat(timespec="seconds")
            for read in found:
                _record(store, read, now, result)
            result.agreement = agreement(votes_from(detail.get("annotations", []), detail.get("decision")) for detail in _reviews(store))
            keep_last_pull(store, mapping, remote, result, _push_command(store))
            result.warnings += mark_queue(client, mapping.project_id, [(r.remote, r.annotations, r.outcome, r.original) for r in found])
    return result


def _read(
    item: WaitingFormalization,
    primary: RemoteTask,
    copies: list[RemoteTask],
    users: dict[int, str],
    adjudicators: frozenset[str],
    result: FormalizationPullResult,
) -> _Read:
    """One formalization's annotations (from every copy) and their outcome by the review's rule."""
    raw = [a for copy in copies for a in copy.annotations if not a.get("was_cancelled")]
    annotations = [ReviewAnnotation.from_label_studio(a, users, FORMALIZATION_REJECTION_REASONS) for a in raw]
    result.annotations += len(annotations)
    formalization = shown_formalization(item)
    original = {name: field_text(formalization, name) for name in CORRECTABLE_FIELDS}
    outcome = decide(annotations, ReviewRules(required=primary.overlap, adjudicators=adjudicators), original)
    return _Read(item, primary, annotations, original, outcome)


def _record(store: RunStore, read: _Read, now: str, result: FormalizationPullResult) -> None:
    """Keep one formalization's review: its verdict (final), or while it waits its votes so far; and
    its disagreements, in the review and the ledger."""
    rid, outcome = read.item.record_id, read.outcome
    before = formalization_review(store, rid)
    decision = outcome.decision
    if decision is None and before is None and not outcome.votes and outcome.adjudication is None:
        result.pending.append(rid)  # nothing voted yet: nothing to keep
        result.progress[rid] = outcome.progress
        return
    history = [Disagreement.model_validate(d) for d in (before or {}).get("disagreements", [])]
    disagreements = merge_disagreements(history, outcome.disagreements, outcome.adjudication, now)
    if decision is not None:  # the verdict is final: nothing left open can change it
        final = {"resolved_at": now, "resolution": f"the verdict is final ({decision.explanation})"}
        disagreements = [d if d.resolved_at else d.model_copy(update=final) for d in disagreements]
    accepted = decision is not None and decision.decision == "accepted"
    provenance = apply_corrections(outcome, read.original, dict(read.original)) if accepted else []
    entries = [d.model_dump(mode="json", exclude_none=True) for d in disagreements]
    detail = {
        "decision": None if decision is None else decision.decision,
        "final_rule": None if decision is None else decision.rule,
        "waiting_for": outcome.waiting_for,
        "votes": outcome.progress,
        "explanation": outcome.explanation,
        "reasons": decision.reasons if decision else [],
        "notes": decision.notes if decision else [],
        "annotations": [annotation_entry(a, outcome, read.original) for a in sorted(read.annotations, key=lambda a: a.order) if a.counts],
        "agreement": task_agreement(outcome.votes),
        "corrections": provenance,
        "disagreements": entries,
        "label_studio": {"project_id": result.project_id, "task_id": read.remote.id},
        "pulled_at": now,
    }
    if decision is None:
        result.pending.append(rid)
        result.progress[rid] = outcome.progress
        if outcome.waiting_for == "adjudication":
            result.queue[rid] = queue_reason(outcome)
        if before is None or {**before, "pulled_at": now} != detail:
            keep_formalization_review(store, rid, detail)
    else:
        corrections = {c["field"]: c["new"] for c in provenance}  # a later correction of a field stands
        try:
            state = record_formalization_verdict(store, read.item, FormalizationVerdict(accepted, _reason(decision), corrections, detail))
        except ValueError as exc:
            result.failed[rid] = str(exc)
            return
        (result.accepted if state == "extracted" else result.rejected).append(rid)
        result.corrections += len(corrections)
    note_disagreements(result, rid, disagreements, now)
    store.ledger.set_disagreements(rid, entries, review="formalizations")


def _reviews(store: RunStore) -> list[dict[str, Any]]:
    """Every formalization review the run keeps (verdicts, and the votes so far of waiting records)."""
    return [found for row in store.ledger.records() if (found := formalization_review(store, row.record_id)) is not None]


def _reason(decision: Decision) -> str:
    if decision.decision == "accepted":
        return f"formalization review: {decision.explanation}; on to code generation"
    return rejection_reason(decision.reasons, decision.notes, decision.explanation, FORMALIZATION_REJECTION_REASONS, "formalization review")
