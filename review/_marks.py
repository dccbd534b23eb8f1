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
from safeforge.review._task_data import MARKS_FIELD, QUEUE_FIELD, TASK_DATA_FIELDS

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
BUILT_IN_COLUMNS = (
    "id", "inner_id", "completed_at", "total_annotations", "cancelled_annotations", "total_predictions", "annotators",
    "annotations_results", "annotations_ids", "predictions_score", "predictions_model_versions", "predictions_results",
    "file_upload", "storage_filename", "created_at", "updated_at", "updated_by", "avg_lead_time", "draft_exists",
    "comment_count", "unresolved_comment_count", "last_comment_updated_at", "comment_authors",
)  # fmt: skip
"""Label Studio 1.23's own Data Manager columns (data_manager/functions.py, get_all_columns)."""
_LABEL_STYLE = "display: block; padding: 4px 8px; margin-bottom: 6px; border-radius: 6px; font-weight: 700;"
_CHANGED_STYLE = "border-left: 4px solid #d98e04; background: #fff4d6; padding: 2px 0 2px 8px; border-radius: 4px;"
_HEADER_STYLE = "margin-left: 8px; color: #8a5a00; font-weight: 700;"


def marks_html(annotations: list[ReviewAnnotation], outcome: Outcome, original: dict[str, str]) -> str:
    """The `marks_html` of a task: CSS rules for the columns of the annotations that changed a
    correction field, and the reason it waits for an adjudicator."""
    rules = [_column_label(annotation, outcome) for annotation in annotations]
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


def _column_label(annotation: ReviewAnnotation, outcome: Outcome) -> str:
    """The CSS rule that names an annotation's Compare All column: its annotator, its id and vote,
    and a refused adjudication with why."""
    column = f'.lsf-wrapper_viewAll :has(> div > [data-annotation-id="{int(annotation.id)}"]) > .sf-root::before'
    what = annotation.decision or "no vote"
    if annotation.adjudicating:
        refused = outcome.ignored.get(annotation.id)
        what = f"adjudication REFUSED ({refused}): {what}" if refused else f"adjudication: {what}"
    text = f"{annotation.annotator} · annotation {annotation.id} · {what}"
    colour = "background: #fde2e1; color: #8a1c12;" if annotation.id in outcome.ignored else "background: #e8eef9; color: #1d3b6f;"
    return f"{column} {{ content: {_css_string(text)}; {_LABEL_STYLE} {colour} }}"


def _css_string(text: str) -> str:
    """`text` as a CSS string literal (quotes, backslashes and line breaks escaped; no markup can end the style)."""
    escaped = "".join(c if c.isalnum() or c in " .·:@()_-+," else f"\\{ord(c):x} " for c in text)
    return f'"{escaped}"'


def queue_reason(outcome: Outcome) -> str:
    """Why the task waits for an adjudicator ("" when it does not)."""
    return outcome.explanation.removeprefix("waiting for an adjudicator: ") if outcome.waiting_for == "adjudication" else ""


def view_data(title: str) -> dict:
    """A view of ours: its filter, and the columns it shows: the task's id and name (task_id) in
    every mode, its source, why it waits for an adjudicator in the queue, and none of what would
    tell an annotator the others' votes (who annotated, their results, counts, times)."""
    shown = {"id", "data.task_id", "data.source", *([f"data.{QUEUE_FIELD}"] if title == QUEUE_VIEW else [])}
    hidden = [f"tasks:{c}" for c in (*BUILT_IN_COLUMNS, *(f"data.{key}" for key in TASK_DATA_FIELDS)) if c not in shown]
    filters = QUEUE_FILTER if title == QUEUE_VIEW else {"conjunction": "and", "items": []}
    return {"title": title, "filters": filters, "hiddenColumns": {"explore": hidden, "labeling": hidden}}


def make_views(client: LabelStudioClient, project_id: int) -> None:
    """Give the project its "Default" tab (when it has none) and its "Adjudication queue" view, and
    bring their columns back to `view_data`'s when they differ (views are shared: anyone may change them)."""
    views = client.views(project_id)
    if not views:  # Label Studio makes its "Default" tab only when there is none: the queue must not be the first
        client.create_view(project_id, view_data(DEFAULT_VIEW))
    for title in (DEFAULT_VIEW, QUEUE_VIEW):
        wanted = view_data(title)
        if title in views:
            view_id, data = views[title]
            if data.get("hiddenColumns") != wanted["hiddenColumns"]:
                client.update_view(project_id, view_id, {**data, "hiddenColumns": wanted["hiddenColumns"]})
        elif title == QUEUE_VIEW:
            client.create_view(project_id, wanted)


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
