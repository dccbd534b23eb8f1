"""`push_run`: send a run's checked tasks to Label Studio for human review.

Creates the run's project (or reuses it: the one in review.json, else the one with the run's
title), imports every checked task that is not in it yet, with the quality judge's verdict as a
prediction, and moves those records to `in_review`. Pushing again adds nothing. Which tasks are in
the project is read from Label Studio itself (each task carries its `task_id`), so a push that was
interrupted between importing and updating the ledger is completed, not repeated.

A task folder that cannot be shown (missing or broken metadata.json) moves its record to `error`
with the reason; the others go on. A project or task deleted in Label Studio stops the push with
what to do (`reimport_missing=True` creates the project again and re-imports those tasks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from safeforge.review._client import LabelStudioClient, RemoteProject, extra_copies
from safeforge.review._config import ReviewConfig
from safeforge.review._errors import NotFoundError, ReviewError
from safeforge.review._mapping import ReviewMapping, TaskLink
from safeforge.review._task_data import LABELING_CONFIG, build_task
from safeforge.runs.ledger import RecordRow, RunStore
from safeforge.runs.lock import RunLock
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
    duplicates_removed: int = 0
    """Extra copies of tasks deleted from the project (`--remove-duplicates`)."""

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def summary(self) -> str:
        lines = [
            f"project {self.project_id} ({self.project_title!r}) at {self.url}" + (" (created)" if self.created_project else ""),
            f"imported {len(self.imported)} task(s); {self.already_in_project} already there; "
            f"{self.moved_to_review} record(s) now in review",
        ]
        lines += [f"error: {record_id}: {reason}" for record_id, reason in sorted(self.failed.items())]
        if self.duplicates_removed:
            lines.append(f"removed {self.duplicates_removed} extra copy(ies) of tasks imported twice")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def push_run(
    store: RunStore,
    client_config: ReviewConfig,
    *,
    annotators_per_task: int | None = None,
    reimport_missing: bool = False,
    remove_duplicates: bool = False,
    batch_size: int = 50,
    progress: Progress | None = None,
) -> PushResult:
    """Import the run's checked tasks into its Label Studio project and move them to in_review
    (holding the run's lock: one writer per run). `annotators_per_task` (default 1 for a new
    project) is applied to an existing project too, and said so in the result's warnings."""
    with RunLock(store.root, "review push"), LabelStudioClient(client_config) as client:
        mapping = ReviewMapping.load(store)
        client.whoami()
        label_config = LABELING_CONFIG.read_text(encoding="utf-8")
        project, created = _project(client, store, mapping, label_config, annotators_per_task, reimport_missing)
        remote = _remote_index(client, project.id)
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
        result = PushResult(client_config.url, project.id, project.title, created_project=created)
        if remove_duplicates:
            _remove_duplicates(client, project.id, result)
        if not created and project.label_config.strip() != label_config.strip():
            client.set_label_config(project.id, label_config)
            result.warnings.append(f"project {project.id} now shows this version's review interface")
        if not created and annotators_per_task is not None and annotators_per_task != project.annotators_per_task:
            client.set_annotators_per_task(project.id, annotators_per_task)
            result.warnings.append(
                f"project {project.id} now wants {annotators_per_task} annotator(s) per task (it wanted "
                f"{project.annotators_per_task}); decisions wait for that many"
            )
        candidates = store.ledger.records(state="checked") + missing
        to_import = [row for row in candidates if _task_id(row) not in remote]
        result.already_in_project = len(candidates) - len(to_import)
        for start in range(0, len(to_import), batch_size):
            payloads = []
            for row in to_import[start : start + batch_size]:
                try:
                    payloads.append(build_task(store.task_dir(_task_id(row)), row.record_id, row.source))
                except TaskError as exc:
                    result.failed[row.record_id] = f"review push: {exc}"
            if payloads:
                client.import_tasks(project.id, payloads)
                result.imported += [payload["data"]["task_id"] for payload in payloads]
            if progress:
                progress(min(start + batch_size, len(to_import)), len(to_import))
        remote = _remote_index(client, project.id, result.warnings)
    not_found = [task_id for task_id in result.imported if task_id not in remote]
    if not_found:
        raise ReviewError(
            f"Label Studio accepted the import but does not list task(s) {', '.join(not_found)} "
            f"in project {project.id}; push again to retry"
        )
    _save_mapping(store, mapping, client_config.url, project, remote)
    _update_ledger(store, result, remote, client_config.url, project.id)
    return result


def _task_id(row: RecordRow) -> str:
    return row.task_id or row.record_id


def _project(
    client: LabelStudioClient,
    store: RunStore,
    mapping: ReviewMapping,
    label_config: str,
    annotators_per_task: int | None,
    reimport_missing: bool,
) -> tuple[RemoteProject, bool]:
    title = project_title(store)
    if mapping.project_id is not None:
        try:
            project = client.project(mapping.project_id)
        except NotFoundError:
            if not reimport_missing:
                raise ReviewError(
                    f"Label Studio project {mapping.project_id} ({mapping.project_title!r}) of run {store.name} no "
                    f"longer exists at {client.config.url} (deleted?); the annotations made there are lost. Run "
                    f"`safeforge review push {store.name} --reimport-missing` to create it again and import "
                    f"the run's tasks in review."
                ) from None
        else:
            if project.title != mapping.project_title:
                raise ReviewError(
                    f"project {project.id} at {client.config.url} is titled {project.title!r}, not "
                    f"{mapping.project_title!r}: is LABEL_STUDIO_URL the server run {store.name} was pushed to "
                    f"({mapping.url})?"
                )
            return project, False
    found = client.projects_titled(title)
    if len(found) > 1:
        raise ReviewError(
            f"{len(found)} Label Studio projects are titled {title!r} "
            f"({', '.join(str(p.id) for p in found)}); delete or rename all but one and push again"
        )
    if found:
        return found[0], False
    description = (
        f"Human review of Safeforge run {store.name} ({store.root.resolve()}). Tasks arrive with "
        f"`safeforge review push`; decisions are read back with `safeforge review pull`."
    )
    return client.create_project(title, description, label_config, annotators_per_task or 1), True


def _remove_duplicates(client: LabelStudioClient, project_id: int, result: PushResult) -> None:
    """Delete the extra copies of tasks imported twice, keeping the oldest (the one the review
    uses); a copy that holds annotations is kept and named, never deleted."""
    tasks = client.tasks(project_id, with_annotations=True)
    by_id = {task.id: task for task in tasks}
    for task_id, extra in sorted(extra_copies(tasks).items()):
        for ls_id in extra:
            if by_id[ls_id].annotations:
                result.warnings.append(f"task {task_id}: copy {ls_id} has annotations and was kept; move them to the first copy by hand")
                continue
            client.delete_task(ls_id)
            result.duplicates_removed += 1


def _remote_index(client: LabelStudioClient, project_id: int, warnings: list[str] | None = None) -> dict[str, int]:
    """task_id -> Label Studio task id (the oldest, if a task was imported twice)."""
    index: dict[str, int] = {}
    for task in sorted(client.tasks(project_id), key=lambda t: t.id):
        task_id = task.data.get("task_id")
        if not task_id:
            continue
        if task_id in index and warnings is not None:
            warnings.append(
                f"task {task_id} is in project {project_id} twice (Label Studio ids {index[task_id]} "
                f"and {task.id}); the review uses {index[task_id]}"
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
