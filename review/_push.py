"""`push_run`: send a run's checked tasks to Label Studio for human review, and set how the run is
reviewed.

The run's project is the one in review.json, else the oldest project titled `Safeforge <run>`, else a
new one: a run name is one project, whatever folder pushes it. Two pushes that create the project at
once each check afterwards and keep the oldest (the other deletes the empty one it made); tasks two
pushes imported at once are kept once the same way. Every checked task that is not in the project yet
is imported (nothing pre-annotated) and its record moves to `in_review`; pushing again adds nothing.
Which tasks are in the project is read from Label Studio itself (each task carries its `task_id`),
so a push interrupted between importing and updating the ledger is completed, not repeated. A push
lists the project's tasks once, and once more only after importing (to see the copies another push
imported at the same time).

How the run is reviewed: `annotators_per_task` (N >= 1) annotators on every task, or on a share of
tasks (`overlap_share` in (0, 1], the others by one annotator), and the named `adjudicators`, whose
adjudication alone decides. A push that changes these brings the run's decisions up to date at once
(as a pull does): a decided task that now lacks votes goes back to review, and the push says so.

A task folder that cannot be shown (missing or broken metadata.json) moves its record to `error`
with the reason; the others go on. A project or task deleted in Label Studio stops the push with
what to do (`reimport_missing=True` creates the project again and re-imports those tasks).
`remove_duplicates=True` merges extra copies of a task into the one the review uses: their
annotations are moved there (same author, result and lead time), then the copies are deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from safeforge.common.ranges import SHARE, Range
from safeforge.review._client import LabelStudioClient, RemoteProject, RemoteTask, copies_by_task
from safeforge.review._config import ReviewConfig
from safeforge.review._errors import NotFoundError, ReviewError
from safeforge.review._mapping import ReviewMapping, TaskLink
from safeforge.review._marks import make_views
from safeforge.review._pull import PullResult, pull_locked
from safeforge.review._task_data import LABELING_CONFIG, MARKS_FIELD, QUEUE_FIELD, build_task
from safeforge.runs.ledger import RecordRow, RunStore
from safeforge.runs.lock import RunLock
from safeforge.settings import Settings
from safeforge.task.folder import TaskError

Progress = Callable[[int, int], None]
_TITLE_LIMIT = 50  # Label Studio's maximum project title length


def project_title(store: RunStore) -> str:
    return f"Safeforge {store.name}"[:_TITLE_LIMIT]


@dataclass
class PushResult:
    """What a push did."""

    url: str
    project_id: int
    project_title: str
    created_project: bool = False
    imported: list[str] = field(default_factory=list)
    """Task ids imported by this push."""
    already_in_project: int = 0
    """Checked or in-review tasks that were already in the project (nothing imported for them)."""
    moved_to_review: int = 0
    """Ledger records moved from checked to in_review."""
    failed: dict[str, str] = field(default_factory=dict)
    """record_id -> why its task could not be pushed (a checked record moves to `error`)."""
    warnings: list[str] = field(default_factory=list)
    adjudicators: list[str] = field(default_factory=list)
    """The run's named adjudicators after this push."""
    duplicates_removed: int = 0
    """Extra copies of tasks deleted from the project (`--remove-duplicates`)."""
    annotations_moved: int = 0
    """Annotations moved from those copies to the task the review uses."""
    decisions: PullResult | None = None
    """The decisions brought up to date, when this push changed how the run is reviewed."""
    what: str = "task"
    """What was pushed: checked tasks, or the formalizations of records waiting for their review."""

    def to_dict(self) -> dict:
        data = dict(self.__dict__)
        data["decisions"] = self.decisions.to_dict() if self.decisions else None
        return data

    def summary(self) -> str:
        lines = [
            f"project {self.project_id} ({self.project_title!r}) at {self.url}" + (" (created)" if self.created_project else ""),
            f"imported {len(self.imported)} {self.what}(s); {self.already_in_project} already there"
            + (f"; {self.moved_to_review} record(s) now in review" if self.what == "task" else ""),
        ]
        lines += [f"error: {record_id}: {reason}" for record_id, reason in sorted(self.failed.items())]
        if self.duplicates_removed:
            lines.append(
                f"merged {self.duplicates_removed} extra copy(ies) of tasks imported twice ({self.annotations_moved} annotation(s) moved)"
            )
        lines += [f"warning: {w}" for w in self.warnings]
        if self.decisions is not None:
            d = self.decisions
            lines.append(
                f"decisions brought up to date: accepted {len(d.accepted)}, rejected {len(d.rejected)}, re-opened {len(d.reopened)}"
            )
            lines += [f"re-opened: {task_id}: {why}" for task_id, why in sorted(d.reopened.items())]
            lines += [f"decision changed: {task_id}" for task_id in d.changed]
            lines += [f"needs adjudication: {task_id}: {why}" for task_id, why in sorted(d.queue.items())]
        return "\n".join(lines)


ANNOTATORS_PER_TASK = Range(1, 100)
OVERLAP_SHARE = SHARE


def check_overlap(annotators_per_task: int | None, overlap_share: float | None) -> None:
    """ReviewError unless N and the share are in their ranges (N from 1 to 100, the share in (0, 1])."""
    if annotators_per_task is not None and not ANNOTATORS_PER_TASK.holds(annotators_per_task):
        raise ReviewError(f"annotators per task must be {ANNOTATORS_PER_TASK.describe()} (got {annotators_per_task!r})")
    if overlap_share is not None and not OVERLAP_SHARE.holds(overlap_share):
        raise ReviewError(f"the share of tasks with several annotators must be {OVERLAP_SHARE.describe()} (got {overlap_share!r})")


def push_run(
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
    """Import the run's checked tasks into its Label Studio project and move them to in_review,
    holding the run's lock (one writer per run). `annotators_per_task` (default 1 for a new project)
    and `overlap_share` (default 1: every task) change an existing project too; `adjudicators`
    replaces the run's named adjudicators (None keeps them). Each change is said in the warnings."""
    check_overlap(annotators_per_task, overlap_share)
    with RunLock(store.root, "review push"), LabelStudioClient(client_config) as client:
        mapping = ReviewMapping.load(store)
        client.whoami()
        label_config = LABELING_CONFIG.read_text(encoding="utf-8")
        warnings: list[str] = []
        description = (
            f"Human review of Safeforge run {store.name}. Tasks arrive with `safeforge review push`; "
            f"decisions are read back with `safeforge review pull`."
        )
        project, created = open_project(
            client,
            mapping,
            (project_title(store), description, f"safeforge review push {store.name}"),
            label_config,
            annotators_per_task or 1,
            overlap_share or 1.0,
            reimport_missing,
            warnings,
        )
        listed = client.tasks(project.id, with_annotations=remove_duplicates)
        remote = remote_index(listed, project.id)
        in_review = store.ledger.records(state="in_review")
        missing = [row for row in in_review if _task_id(row) not in remote]
        if missing and not reimport_missing:
            names = ", ".join(_task_id(row) for row in missing[:10]) + (" ..." if len(missing) > 10 else "")
            raise ReviewError(
                f"{len(missing)} task(s) of run {store.name} that are in review are missing from Label Studio "
                f"project {project.id} at {client_config.url} (deleted there?): {names}. Run "
                f"`safeforge review push {store.name} --reimport-missing` to import them again "
                f"(annotations made on the deleted tasks are lost)."
            )
        result = PushResult(client_config.url, project.id, project.title, created_project=created, warnings=warnings)
        if remove_duplicates:
            listed = merge_duplicates(client, listed, result)
        update_interface(client, project, label_config, created, result, listed)
        rules_changed = not created and apply_overlap(client, project, annotators_per_task, overlap_share, result)
        rules_changed |= apply_adjudicators(client, mapping, adjudicators, result)
        candidates = store.ledger.records(state="checked") + missing
        to_import = [row for row in candidates if _task_id(row) not in remote]
        result.already_in_project = len(candidates) - len(to_import)
        created_ids: list[int] = []
        workbench = Settings.load().workbench_address  # read once per push
        for start in range(0, len(to_import), batch_size):
            payloads = []
            for row in to_import[start : start + batch_size]:
                try:
                    payloads.append(build_task(store.task_dir(_task_id(row)), row.record_id, row.source, workbench))
                except TaskError as exc:
                    result.failed[row.record_id] = f"review push: {exc}"
            if payloads:
                created_ids += client.import_tasks(project.id, payloads)
                result.imported += [payload["data"]["task_id"] for payload in payloads]
            if progress:
                progress(min(start + batch_size, len(to_import)), len(to_import))
        known_before = None
        if result.imported:
            known_before = max(remote.values(), default=0)
            listed = listed_after_import(client, project.id, created_ids, result, "task(s)")
        remote = remote_index(listed, project.id, result.warnings, known_before)
        not_found = [task_id for task_id in result.imported if task_id not in remote]
        if not_found:
            raise ReviewError(
                f"Label Studio accepted the import but does not list task(s) {', '.join(not_found)} "
                f"in project {project.id}; push again to retry"
            )
        _save_mapping(store, mapping, client_config.url, project, remote)
        _update_ledger(store, result, remote, client_config.url, project.id)
        result.adjudicators = mapping.adjudicators
        if rules_changed and not created:
            result.decisions = pull_locked(store, client_config)
    return result


def _task_id(row: RecordRow) -> str:
    return row.task_id or row.record_id


def open_project(
    client: LabelStudioClient,
    mapping: ReviewMapping,
    project: tuple[str, str, str],
    label_config: str,
    annotators_per_task: int,
    overlap_share: float,
    reimport_missing: bool,
    warnings: list[str],
) -> tuple[RemoteProject, bool]:
    """The run's project (`project`: its title, its description and the push command of the run),
    from the mapping, else the oldest of that title, else a new one; and whether this call made it."""
    title, description, push = project
    if mapping.project_id is not None:
        try:
            found = client.project(mapping.project_id)
        except NotFoundError:
            if not reimport_missing:
                raise ReviewError(
                    f"Label Studio project {mapping.project_id} ({mapping.project_title!r}) no longer exists at "
                    f"{client.config.url} (deleted?); the annotations made there are lost. Run `{push} --reimport-missing` "
                    f"to create it again and import its tasks again."
                ) from None
        else:
            if found.title != mapping.project_title:
                raise ReviewError(
                    f"project {found.id} at {client.config.url} is titled {found.title!r}, not "
                    f"{mapping.project_title!r}: is LABEL_STUDIO_URL the server the run was pushed to ({mapping.url})?"
                )
            return found, False
    existing = client.projects_titled(title)
    if existing:
        return existing[0], False
    try:
        mine = client.create_project(title, description, label_config, annotators_per_task, overlap_share)
    except ReviewError:
        existing = client.projects_titled(title)  # created after all (the answer was lost), or by another push
        if not existing:
            raise
        return existing[0], False
    oldest = client.projects_titled(title)[0]
    if oldest.id == mine.id:
        return mine, True
    client.delete_project(mine.id)  # another push made the run's project first: use that one
    warnings.append(
        f"another push created project {oldest.id} for this run at the same time; the one this push made ({mine.id}) was deleted"
    )
    return oldest, False


def apply_overlap(
    client: LabelStudioClient, project: RemoteProject, annotators: int | None, share: float | None, result: PushResult
) -> bool:
    """Set the project's overlap when asked for a different one; whether it changed."""
    wanted = (annotators or project.annotators_per_task, share or project.overlap_share)
    if wanted == (project.annotators_per_task, project.overlap_share):
        return False
    client.set_overlap(project.id, *wanted)
    before = _overlap_text(project.annotators_per_task, project.overlap_share)
    result.warnings.append(f"project {project.id} now wants {_overlap_text(*wanted)} (it wanted {before})")
    return True


def _overlap_text(annotators: int, share: float) -> str:
    if annotators == 1 or share >= 1:
        return f"{annotators} annotator(s) per task"
    return f"{annotators} annotators on {share:.0%} of tasks, 1 on the others"


def apply_adjudicators(client: LabelStudioClient, mapping: ReviewMapping, adjudicators: list[str] | None, result: PushResult) -> bool:
    """Name the run's adjudicators when given; whether they changed."""
    if adjudicators is None:
        return False
    wanted = sorted({a.strip().lower() for a in adjudicators if a.strip()})
    if wanted == mapping.adjudicators:
        return False
    known = {email.lower() for email in client.user_emails().values()}
    result.warnings.append(f"adjudicators of run: {', '.join(wanted) or 'none'} (were: {', '.join(mapping.adjudicators) or 'none'})")
    result.warnings += [
        f"{email} has no account on this Label Studio server yet: they sign up through the invite link (Organization > Add Members)"
        for email in wanted
        if email not in known
    ]
    mapping.adjudicators = wanted
    return True


def update_interface(
    client: LabelStudioClient, project: RemoteProject, label_config: str, created: bool, result: PushResult, tasks: Iterable[RemoteTask]
) -> None:
    """Give the project its saved views, and an existing project made by an older version this
    version's interface (its `tasks` get the data keys the interface reads)."""
    make_views(client, project.id)
    if created or project.label_config.strip() == label_config.strip():
        return
    for task in tasks:
        if QUEUE_FIELD not in task.data or MARKS_FIELD not in task.data:
            client.update_task_data(task.id, {QUEUE_FIELD: "", MARKS_FIELD: "", **task.data})
    client.set_label_config(project.id, label_config)
    result.warnings.append(f"project {project.id} now shows this version's review interface")


def listed_after_import(
    client: LabelStudioClient, project_id: int, created_ids: list[int], result: PushResult, what: str
) -> list[RemoteTask]:
    """The project's tasks after this push imported `created_ids`, without those of them another push
    had imported first (deleted: they are fresh, nobody has annotated them); a warning says how many."""
    tasks, mine, dropped = client.tasks(project_id), set(created_ids), set()
    for copies in copies_by_task(tasks).values():
        for task in copies[1:]:  # the oldest copy stays
            if task.id in mine:
                client.delete_task(task.id)
                dropped.add(task.id)
    if dropped:
        result.warnings.append(f"{len(dropped)} {what} were imported by another push at the same time; each is kept once")
    return [task for task in tasks if task.id not in dropped]


def merge_duplicates(client: LabelStudioClient, tasks: list[RemoteTask], result: PushResult) -> list[RemoteTask]:
    """Move the annotations of every extra copy of a task to the oldest copy (the one the review
    uses), then delete the extra copies; returns the `tasks` left."""
    deleted = set()
    for copies in copies_by_task(tasks).values():
        keep, *extra = copies
        for copy in extra:
            for annotation in copy.annotations:
                client.copy_annotation(annotation, keep.id)
                result.annotations_moved += 1
            client.delete_task(copy.id)
            deleted.add(copy.id)
            result.duplicates_removed += 1
    return [task for task in tasks if task.id not in deleted]


def remote_index(
    tasks: Iterable[RemoteTask], project_id: int, warnings: list[str] | None = None, known_before: int | None = None
) -> dict[str, int]:
    """task_id -> Label Studio task id of the project's `tasks` (the oldest, if a task was imported
    twice); `warnings` get the extra copies, except those newer than `known_before` that this push did
    not make: a push importing at the same time made them and deletes them itself (`listed_after_import`)."""
    index: dict[str, int] = {}
    for task in sorted(tasks, key=lambda t: t.id):
        task_id = task.data.get("task_id")
        if not task_id:
            continue
        if task_id in index and warnings is not None and (known_before is None or task.id <= known_before):
            warnings.append(
                f"task {task_id} is in project {project_id} twice (Label Studio ids {index[task_id]} "
                f"and {task.id}); the review uses {index[task_id]} and counts the votes on both"
            )
            continue
        index.setdefault(task_id, task.id)
    return index


def _save_mapping(store: RunStore, mapping: ReviewMapping, url: str, project: RemoteProject, remote: dict[str, int]) -> None:
    rows = {
        _task_id(row): row.record_id
        for state in ("checked", "in_review", "accepted", "rejected_by_review")
        for row in store.ledger.records(state=state)
    }
    mapping.url, mapping.project_id, mapping.project_title = url, project.id, project.title
    mapping.tasks = {task_id: TaskLink(rows[task_id], ls_id) for task_id, ls_id in remote.items() if task_id in rows}
    mapping.save(store)


def _update_ledger(store: RunStore, result: PushResult, remote: dict[str, int], url: str, project_id: int) -> None:
    for row in store.ledger.records(state="checked"):
        if row.record_id in result.failed:
            store.ledger.transition(row.record_id, "error", result.failed[row.record_id])
        elif _task_id(row) in remote:
            ls_id = remote[_task_id(row)]
            store.ledger.transition(
                row.record_id,
                "in_review",
                f"in Label Studio project {project_id}, task {ls_id}",
                detail={"url": url, "project_id": project_id, "ls_task_id": ls_id},
            )
            result.moved_to_review += 1
