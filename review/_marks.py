"""The adjudication queue and the correction marks, kept in Label Studio by every pull (of checked
tasks, and of formalizations).

Each pushed task's data holds:
- `needs_adjudication`: why the task waits for an adjudicator, or "" when it does not; the project's
  saved Data Manager view "Adjudication queue" lists the tasks where it is
  not empty, for every user of the project (after an unfiltered "Default" tab, made when the project
  has no tab yet, so that annotators' queue stays whole); push makes both, and every pull makes
  them again if they were deleted;
- `marks_html`: a style sheet for Compare All that marks, in each annotation's column, the correction
  fields that annotation changed (and says which on the collapsed panel's header), with a note of
  why the task waits for an adjudicator. Outside Compare All it shows nothing.
A task is written only when these change. A failure here is a warning, never an error: the run's
review is recorded already, and the next pull tries again.
"""

from __future__ import annotations

from html import escape

from safeforge.review._annotations import ReviewAnnotation
from safeforge.review._client import LabelStudioClient, RemoteTask
from safeforge.review._decide import Outcome, changed_fields
from safeforge.review._errors import ReviewError
from safeforge.review._task_data import MARKS_FIELD, QUEUE_FIELD

QUEUE_VIEW = "Adjudication queue"
DEFAULT_VIEW = "Default"
QUEUE_FILTER = {
    "conjunction": "and",
    "items": [{"filter": f"filter:tasks:data.{QUEUE_FIELD}", "operator": "empty", "type": "String", "value": False}],
}
FIELD_LABELS = {
    "setting": "setting",
    "robot_role": "robot role",
    "robot_task": "robot task",
    "cause_of_danger": "cause of danger",
    "result_of_danger": "result of danger",
    "danger_action": "danger action",
    "instantaneous_solution": "instantaneous solution",
    "assumptions": "assumptions",
}
_CHANGED_STYLE = "border-left: 4px solid #d98e04; background: #fff4d6; padding: 2px 0 2px 8px; border-radius: 4px;"
_HEADER_STYLE = "margin-left: 8px; color: #8a5a00; font-weight: 700;"


def marks_html(annotations: list[ReviewAnnotation], outcome: Outcome, original: dict[str, str]) -> str:
    """The `marks_html` of a task: CSS rules for the columns of the annotations that changed a
    correction field, and the reason it waits for an adjudicator."""
    rules = []
    for annotation in sorted(annotations, key=lambda a: a.id):
        changed = [name for name in FIELD_LABELS if name in changed_fields(annotation, original)] if annotation.counts else []
        if not changed:
            continue
        column = f':has(> div > [data-annotation-id="{int(annotation.id)}"]) > .sf-root'
        rules += [f"{column} .sf-fix-{name} {{ {_CHANGED_STYLE} }}" for name in changed]
        listed = ", ".join(FIELD_LABELS[name] for name in changed)
        rules.append(f'{column} .sf-corrections .ant-collapse-header::after {{ content: "✎ changed: {listed}"; {_HEADER_STYLE} }}')
    html = f"<style>{' '.join(rules)}</style>" if rules else ""
    if outcome.waiting_for == "adjudication":
        html += f'<div class="sf-queue-note">Needs adjudication: {escape(queue_reason(outcome))}</div>'
    return html


def queue_reason(outcome: Outcome) -> str:
    """Why the task waits for an adjudicator ("" when it does not)."""
    return outcome.explanation.removeprefix("waiting for an adjudicator: ") if outcome.waiting_for == "adjudication" else ""


def make_views(client: LabelStudioClient, project_id: int) -> None:
    """Give the project its "Default" tab (when it has none) and its "Adjudication queue" view."""
    views = client.views(project_id)
    if not views:  # Label Studio makes its "Default" tab only when there is none: the queue must not be the first
        client.create_view(project_id, DEFAULT_VIEW, {"conjunction": "and", "items": []})
    if QUEUE_VIEW not in views:
        client.create_view(project_id, QUEUE_VIEW, QUEUE_FILTER)


def mark_queue(
    client: LabelStudioClient, project_id: int, tasks: list[tuple[RemoteTask, list[ReviewAnnotation], Outcome, dict[str, str]]]
) -> list[str]:
    """Bring the queue view and each task's `needs_adjudication` and `marks_html` up to date;
    returns warnings (empty when all went well)."""
    try:
        make_views(client, project_id)
        for remote, annotations, outcome, original in tasks:
            wanted = {QUEUE_FIELD: queue_reason(outcome), MARKS_FIELD: marks_html(annotations, outcome, original)}
            if any(remote.data.get(key) != value for key, value in wanted.items()):
                client.update_task_data(remote.id, {**remote.data, **wanted})
    except ReviewError as exc:
        return [f"the adjudication queue in Label Studio is not up to date ({exc}); the next pull tries again"]
    return []
