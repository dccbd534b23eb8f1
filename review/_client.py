"""The Label Studio calls review needs, over label-studio-sdk, with errors that say what to do.

Every SDK or network failure becomes a `ReviewError` naming the server, the action and the fix:
server down (connection refused, timeout), a refused token (401/403), a missing project or
task (404, as `NotFoundError`), anything else with the server's answer. Requests that create
something (a project, tasks, an annotation, a view) are sent once, never retried by the SDK: a retry
after an answer that was lost would create it twice; the callers check what exists instead.
Projects are set for blind voting: an annotator's label stream shows no earlier annotation
(`show_annotation_history` off) and no prediction, which could carry one (`show_collab_predictions`
off); what Label Studio community cannot hide is in docs/review.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import httpx
from label_studio_sdk import LabelStudio
from label_studio_sdk.core.api_error import ApiError
from label_studio_sdk.core.pagination import SyncPager
from label_studio_sdk.core.request_options import RequestOptions

from safeforge.review._config import ReviewConfig
from safeforge.review._errors import NotFoundError, ReviewError

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_ONCE: RequestOptions = {"max_retries": 0}


@dataclass
class RemoteTask:
    """A task as Label Studio holds it."""

    id: int
    data: dict
    annotations: list[dict] = field(default_factory=list)
    overlap: int = 1
    """Annotators the task needs (Label Studio sets it from the project's overlap settings)."""


@dataclass(frozen=True)
class RemoteProject:
    id: int
    title: str
    annotators_per_task: int = 1
    """How many annotators must submit each task (Label Studio's maximum_annotations)."""
    label_config: str = ""
    """The labeling interface (XML)."""
    overlap_share: float = 1.0
    """Share of tasks that need `annotators_per_task` annotators; the others need one."""


class LabelStudioClient:
    """The few Label Studio operations review uses."""

    def __init__(self, config: ReviewConfig):
        self.config = config
        host = urlparse(config.url).hostname or ""
        self._http = httpx.Client(timeout=config.timeout, trust_env=host not in _LOOPBACK)
        self._sdk = LabelStudio(base_url=config.url, api_key=config.api_key, timeout=config.timeout, httpx_client=self._http)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LabelStudioClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _calling(self, action: str) -> Iterator[None]:
        url = self.config.url
        try:
            yield
        except (httpx.ConnectError, httpx.TimeoutException, httpx.RemoteProtocolError) as exc:
            raise ReviewError(
                f"cannot reach Label Studio at {url} while {action} ({type(exc).__name__}: {exc}). "
                f"Start it with `safeforge review server start`, or set LABEL_STUDIO_URL to where it "
                f"runs."
            ) from None
        except httpx.HTTPError as exc:
            raise ReviewError(f"talking to Label Studio at {url} failed while {action}: {type(exc).__name__}: {exc}") from None
        except ApiError as exc:
            detail = exc.body.get("detail") if isinstance(exc.body, dict) else exc.body
            if exc.status_code in (401, 403):
                raise ReviewError(
                    f"Label Studio at {url} refused the API token ({exc.status_code}: {detail}) while "
                    f"{action}. Set LABEL_STUDIO_API_KEY to the token of an admin user (Account & "
                    f"Settings > Access Token in the web interface; legacy tokens must be enabled, "
                    f"which `safeforge review server start` does)."
                ) from None
            if exc.status_code == 404:
                raise NotFoundError(f"Label Studio at {url} has no such object (404) while {action}") from None
            raise ReviewError(f"Label Studio at {url} answered {exc.status_code} while {action}: {detail}") from None

    def whoami(self) -> str:
        """The e-mail of the token's user; checks that the server is up and the token valid."""
        with self._calling("checking the API token"):
            return self._sdk.users.whoami().email or ""

    def project(self, project_id: int) -> RemoteProject:
        with self._calling(f"reading project {project_id}"):
            project = self._sdk.projects.get(project_id)
        return _remote(project)

    def projects_titled(self, title: str) -> list[RemoteProject]:
        """The projects with exactly this title, oldest first."""
        with self._calling("listing projects"):
            projects: list = every_item(self._sdk.projects.list(title=title), lambda page: page.count)
        return sorted((_remote(p) for p in projects if p.title == title), key=lambda p: p.id)

    def create_project(
        self, title: str, description: str, label_config: str, annotators_per_task: int, overlap_share: float
    ) -> RemoteProject:
        with self._calling(f"creating project {title!r}"):
            project = self._sdk.projects.create(
                title=title,
                description=description,
                label_config=label_config,
                maximum_annotations=annotators_per_task,
                overlap_cohort_percentage=_percent(overlap_share),
                show_annotation_history=False,  # blind voting (module docstring)
                show_collab_predictions=False,
                request_options=_ONCE,
            )
        return RemoteProject(_id(project.id), project.title or title, annotators_per_task, label_config, overlap_share)

    def delete_project(self, project_id: int) -> None:
        with self._calling(f"deleting project {project_id}"):
            self._sdk.projects.delete(project_id)

    def set_label_config(self, project_id: int, label_config: str) -> None:
        """The labeling interface, and the settings of blind voting (module docstring)."""
        with self._calling(f"update the labeling interface of project {project_id}"):
            self._sdk.projects.update(
                id=project_id, label_config=label_config, show_annotation_history=False, show_collab_predictions=False
            )

    def set_overlap(self, project_id: int, annotators: int, share: float) -> None:
        with self._calling(f"setting project {project_id}'s overlap to {annotators} annotator(s) on {share:.0%} of tasks"):
            self._sdk.projects.update(id=project_id, maximum_annotations=annotators, overlap_cohort_percentage=_percent(share))

    def tasks(self, project_id: int, with_annotations: bool = False) -> list[RemoteTask]:
        """Every task of the project (with its submitted annotations when asked)."""
        with self._calling(f"listing the tasks of project {project_id}"):
            pager: SyncPager = self._sdk.tasks.list(project=project_id, fields="all" if with_annotations else "task_only", page_size=500)
            return [
                RemoteTask(
                    task.id,
                    dict(task.data or {}),
                    [_as_dict(a) for a in (task.annotations or [])] if with_annotations else [],
                    task.overlap or 1,
                )
                for task in every_item(pager, lambda page: page.total)
            ]

    def import_tasks(self, project_id: int, tasks: Sequence[dict]) -> list[int]:
        """Import tasks (each {"data": ...}); returns the ids Label Studio gave them."""
        with self._calling(f"importing {len(tasks)} task(s) into project {project_id}"):
            response = self._sdk.projects.import_tasks(
                project_id,
                request=list(tasks),  # type: ignore[arg-type]
                return_task_ids=True,
                request_options=_ONCE,
            )
        return list(getattr(response, "task_ids", None) or [])

    def delete_task(self, task_id: int) -> None:
        with self._calling(f"deleting task {task_id}"):
            self._sdk.tasks.delete(str(task_id))

    def update_task_data(self, task_id: int, data: dict) -> None:
        with self._calling(f"updating the data of task {task_id}"):
            self._sdk.tasks.update(str(task_id), data=data)

    def copy_annotation(self, annotation: dict, to_task: int) -> int:
        """Create `annotation` again on task `to_task`: same result, author and lead time, the
        original's id as `import_id`; returns the new annotation's id."""
        author = annotation.get("completed_by")
        with self._calling(f"copying annotation {annotation['id']} to task {to_task}"):
            created = self._sdk.annotations.create(
                to_task,
                result=annotation.get("result") or [],
                completed_by=author.get("id") if isinstance(author, dict) else author,
                lead_time=annotation.get("lead_time"),
                import_id=int(annotation["id"]),
                request_options=_ONCE,
            )
        return _id(created.id)

    def views(self, project_id: int) -> dict[str, tuple[int, dict]]:
        """The project's saved Data Manager views (tabs): title -> (id, its data)."""
        with self._calling(f"listing the views of project {project_id}"):
            return {
                str((view.data or {}).get("title", "")): (_id(view.id), _as_dict(view.data or {}))
                for view in self._sdk.views.list(project=project_id)
            }

    def create_view(self, project_id: int, data: dict) -> int:
        """A view (`data`: its title, filters, hiddenColumns ...)."""
        with self._calling(f"creating view {data.get('title')!r} in project {project_id}"):
            view = self._sdk.views.create(project=project_id, data=data, request_options=_ONCE)  # pyright: ignore[reportArgumentType]  # the SDK also takes a mapping
        return _id(view.id)

    def update_view(self, project_id: int, view_id: int, data: dict) -> None:
        with self._calling(f"updating view {data.get('title')!r} of project {project_id}"):
            self._sdk.views.update(str(view_id), project=project_id, data=data)  # pyright: ignore[reportArgumentType]  # the SDK also takes a mapping

    def user_emails(self) -> dict[int, str]:
        """User id -> e-mail (the annotator identity recorded in the run)."""
        with self._calling("listing users"):
            return {_id(user.id): user.email or user.username or f"user {user.id}" for user in self._sdk.users.list()}


def every_item(pager: SyncPager, total: Callable[[Any], int]) -> list:
    """Every item of a paged list, asking for no page past the last (Label Studio logs "Invalid
    page." for one): pages are read until `total` (of a page's response) items are in."""
    items = list(pager.items or [])
    while len(items) < total(pager.response) and (page := pager.next_page()) is not None and page.items:
        items += page.items
        pager = page
    return items


def _as_dict(annotation) -> dict:
    return annotation if isinstance(annotation, dict) else annotation.model_dump()


def _remote(project) -> RemoteProject:
    share = project.overlap_cohort_percentage
    return RemoteProject(
        _id(project.id),
        project.title or "",
        project.maximum_annotations or 1,
        project.label_config or "",
        (share if share is not None else 100) / 100,
    )


def _percent(share: float) -> int:
    return max(1, min(100, round(share * 100)))


def _id(value: int | None) -> int:
    """The id of an object the server returned (it always returns one for an object it holds)."""
    if value is None:
        raise ReviewError("Label Studio returned an object without an id")
    return value


def copies_by_task(tasks: Iterable[RemoteTask]) -> dict[str, list[RemoteTask]]:
    """task_id -> every copy of a task the project holds more than once, oldest first (the first is
    the one the review uses)."""
    grouped: dict[str, list[RemoteTask]] = {}
    for task in sorted(tasks, key=lambda t: t.id):
        if task.data.get("task_id"):
            grouped.setdefault(str(task.data["task_id"]), []).append(task)
    return {task_id: copies for task_id, copies in grouped.items() if len(copies) > 1}


def extra_copies(tasks: Iterable[RemoteTask]) -> dict[str, list[int]]:
    """task_id -> Label Studio ids of every copy but the oldest."""
    return {task_id: [task.id for task in copies[1:]] for task_id, copies in copies_by_task(tasks).items()}
