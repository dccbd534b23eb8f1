"""The formalization review in Label Studio: the formalizations of a run's records that wait for it
(`awaiting_formalization_review`, see `safeforge.generation`) go to a project of their own, and the
verdicts come back before code generation, as DESPITE has people review formalizations.

    push_formalizations(store, config)   waiting formalizations -> the run's formalization project
    pull_formalizations(store, config)   verdicts -> accepted: the record is generated on the run's
                                         next resume (from the corrected formalization);
                                         rejected: rejected_by_formalization_review, with the reasons

The project is titled `Formalization review: <run>` and mapped in `<run>/review_formalizations.json`;
its interface is review/formalization_config.xml. It works as the review of checked tasks does
(`_push`, `_pull`, `_decide`): the same client, project lookup and creation (a run name is one
project, whatever folder pushes it), annotators per task and share, named adjudicators, and the same
decision rule. A verdict is final: the record leaves the waiting state, and a later vote changes
nothing. Push and pull hold the run's lock; a pull reads everything before it writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from safeforge.generation import FormalizationVerdict, WaitingFormalization, record_formalization_verdict, waiting_formalizations
from safeforge.review._annotations import ReviewAnnotation
from safeforge.review._client import LabelStudioClient, RemoteTask, copies_by_task
from safeforge.review._config import ReviewConfig
from safeforge.review._decide import Decision, ReviewRules, decide
from safeforge.review._errors import ReviewError
from safeforge.review._formalization_data import (
    FORMALIZATION_CONFIG,
    FORMALIZATION_REJECTION_REASONS,
    build_formalization_task,
    shown_formalization,
)
from safeforge.review._mapping import FORMALIZATION_MAPPING_FILE, ReviewMapping, TaskLink
from safeforge.review._marks import queue_reason
from safeforge.review._pull import PullResult, annotation_entry, apply_corrections, read_project, rejection_reason
from safeforge.review._push import (
    Progress,
    PushResult,
    apply_adjudicators,
    apply_overlap,
    check_overlap,
    drop_own_duplicates,
    open_project,
    remote_index,
)
from safeforge.review._task_data import CORRECTABLE_FIELDS, field_text
from safeforge.runs.ledger import RunStore
from safeforge.runs.lock import RunLock

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

    def summary(self) -> str:
        lines = [
            f"formalization review: project {self.project_id} at {self.url}: read {self.annotations} annotation(s)",
            f"accepted {len(self.accepted)} (generated when the run is resumed), rejected {len(self.rejected)}, "
            f"still waiting {len(self.pending)}; {self.corrections} correction(s) applied",
        ]
        lines += [f"still waiting: {rid} ({self.progress.get(rid, '?')} votes)" for rid in self.pending if rid not in self.queue]
        lines += [f"needs adjudication: {rid}: {why}" for rid, why in sorted(self.queue.items())]
        if self.not_pushed:
            lines.append(f"not in the project yet (push again): {', '.join(self.not_pushed)}")
        lines += [f"error: {rid}: {reason}" for rid, reason in sorted(self.failed.items())]
        return "\n".join(lines)


def push_formalizations(
    store: RunStore,
    client_config: ReviewConfig,
    *,
    annotators_per_task: int | None = None,
    overlap_share: float | None = None,
    adjudicators: list[str] | None = None,
    reimport_missing: bool = False,
    batch_size: int = 50,
    progress: Progress | None = None,
) -> PushResult:
    """Import the formalizations of the run's records that wait for their review and are not in the
    run's formalization project yet, holding the run's lock. A waiting record whose formalization
    cannot be read moves to `error` with the reason; the others go on."""
    check_overlap(annotators_per_task, overlap_share)
    with RunLock(store.root, "review push"), LabelStudioClient(client_config) as client:
        mapping = ReviewMapping.load(store, FORMALIZATION_MAPPING_FILE)
        client.whoami()
        description = (
            f"Review of the danger formalizations of Safeforge run {store.name}, before code generation. They arrive "
            f"with `{_push_command(store)}`; verdicts are read back with `safeforge review pull {store.name} --formalizations`."
        )
        warnings: list[str] = []
        project, created = open_project(
            client,
            mapping,
            (formalization_project_title(store), description, _push_command(store)),
            FORMALIZATION_CONFIG.read_text(encoding="utf-8"),
            annotators_per_task or 1,
            overlap_share or 1.0,
            reimport_missing,
            warnings,
        )
        result = PushResult(client_config.url, project.id, project.title, created_project=created, warnings=warnings, what="formalization")
        if not created:
            apply_overlap(client, project, annotators_per_task, overlap_share, result)
        apply_adjudicators(client, mapping, adjudicators, result)
        waiting, problems = waiting_formalizations(store)
        result.failed.update(problems)
        remote = remote_index(client, project.id)
        to_import = [w for w in waiting if w.record_id not in remote]
        result.already_in_project = len(waiting) - len(to_import)
        for start in range(0, len(to_import), batch_size):
            batch = [build_formalization_task(w) for w in to_import[start : start + batch_size]]
            created_ids = client.import_tasks(project.id, batch)
            result.imported += [task["data"]["record_id"] for task in batch]
            if drop_own_duplicates(client, project.id, created_ids):
                result.warnings.append("some formalizations were imported by another push at the same time; each is kept once")
            if progress:
                progress(min(start + batch_size, len(to_import)), len(to_import))
        remote = remote_index(client, project.id, result.warnings)
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
        now = datetime.now(UTC).isoformat(timespec="seconds")
        decided: list[tuple[WaitingFormalization, FormalizationVerdict]] = []
        for item in waiting:
            link = mapping.tasks.get(item.record_id)
            if link is None or link.ls_task_id not in remote:
                result.not_pushed.append(item.record_id)
                continue
            primary = remote[link.ls_task_id]
            verdict = _verdict(item, primary, copies.get(item.record_id, [primary]), users, rules, now, result)
            if verdict is not None:
                decided.append((item, verdict))
        for item, verdict in decided:
            try:
                state = record_formalization_verdict(store, item, verdict)
            except ValueError as exc:
                result.failed[item.record_id] = str(exc)
                continue
            (result.accepted if state == "extracted" else result.rejected).append(item.record_id)
            result.corrections += len(verdict.corrections) if verdict.accepted else 0
    return result


def _verdict(
    item: WaitingFormalization,
    primary: RemoteTask,
    copies: list[RemoteTask],
    users: dict[int, str],
    adjudicators: frozenset[str],
    now: str,
    result: FormalizationPullResult,
) -> FormalizationVerdict | None:
    """The verdict on one formalization by the review's decision rule (None: it still waits)."""
    raw = [a for copy in copies for a in copy.annotations if not a.get("was_cancelled")]
    annotations = [ReviewAnnotation.from_label_studio(a, users, FORMALIZATION_REJECTION_REASONS) for a in raw]
    result.annotations += len(annotations)
    formalization = shown_formalization(item)
    original = {name: field_text(formalization, name) for name in CORRECTABLE_FIELDS}
    outcome = decide(annotations, ReviewRules(required=primary.overlap, adjudicators=adjudicators), original)
    decision = outcome.decision
    if decision is None:
        result.pending.append(item.record_id)
        result.progress[item.record_id] = outcome.progress
        if outcome.waiting_for == "adjudication":
            result.queue[item.record_id] = queue_reason(outcome)
        return None
    accepted = decision.decision == "accepted"
    provenance = apply_corrections(outcome, original, dict(original)) if accepted else []
    detail = {
        "decision": decision.decision,
        "final_rule": decision.rule,
        "votes": outcome.progress,
        "explanation": decision.explanation,
        "reasons": decision.reasons,
        "notes": decision.notes,
        "annotations": [annotation_entry(a, outcome, original) for a in sorted(annotations, key=lambda a: a.order) if a.counts],
        "corrections": provenance,
        "label_studio": {"project_id": result.project_id, "task_id": primary.id},
        "pulled_at": now,
    }
    corrections = {c["field"]: c["new"] for c in provenance}  # a later correction of a field stands
    return FormalizationVerdict(accepted, _reason(decision), corrections, detail)


def _reason(decision: Decision) -> str:
    if decision.decision == "accepted":
        return f"formalization review: {decision.explanation}; on to code generation"
    return rejection_reason(decision.reasons, decision.notes, decision.explanation, FORMALIZATION_REJECTION_REASONS, "formalization review")
