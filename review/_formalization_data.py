"""A record waiting for the formalization review, rendered for its interface
(review/formalization_config.xml): the record's text, the extracted formalization, and the
correction boxes prefilled with it. Nothing is pre-annotated; all text (the record's and the
LLM's) is HTML-escaped before it is put in the pre-rendered HTML fields.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from safeforge.generation import WaitingFormalization
from safeforge.review._task_data import (
    CORRECTABLE_FIELDS,
    MARKS_FIELD,
    QUEUE_FIELD,
    danger_table,
    details_html,
    field_text,
    task_html,
)

FORMALIZATION_CONFIG = Path(__file__).with_name("formalization_config.xml")
# Reasons to reject a formalization: the value stored in annotations -> the label reviewers see.
FORMALIZATION_REJECTION_REASONS = {
    "not_faithful_to_record": "Not faithful to the record",
    "not_practical_for_a_robot": "Not practical for a robot",
    "implausible_setting": "Implausible setting",
    "danger_logic_incomplete": "Danger logic incomplete",
    "no_real_mitigation": "No real mitigation",
    "other": "Other",
}


def shown_formalization(waiting: WaitingFormalization) -> dict:
    """The formalization as the interface shows it (assumptions one per line, as a task's metadata has them)."""
    formalization = waiting.formalization()
    formalization["assumptions"] = "\n".join(formalization.get("assumptions") or [])
    return formalization


def build_formalization_task(waiting: WaitingFormalization) -> dict:
    """The Label Studio task of a record waiting for its formalization review: {"data": ...}."""
    formalization = shown_formalization(waiting)
    data = {
        "task_id": waiting.record_id,
        "record_id": waiting.record_id,
        "source": waiting.source,
        "header": f"{waiting.record_id}   ·   source: {waiting.source}   ·   formalization review",
        "record_html": _record_html(waiting),
        "task_html": task_html(formalization),
        "danger_html": f'<div class="sf-card sf-danger-card"><div class="sf-title">The danger</div>{danger_table(formalization)}</div>',
        "details_html": details_html(formalization),
    }
    data.update({f"current_{name}": field_text(formalization, name) for name in CORRECTABLE_FIELDS})
    data.update({QUEUE_FIELD: "", MARKS_FIELD: ""})  # kept up to date by review pull (_marks)
    return {"data": data}


def _record_html(waiting: WaitingFormalization) -> str:
    text = waiting.record_text or "(the record has no text)"
    return (
        f'<div class="sf-card"><div class="sf-title">The source record</div>'
        f'<p class="sf-detail">record {escape(waiting.record_id)} {escape(waiting.origin)}</p>'
        f'<pre class="sf-pre">{escape(text)}</pre>'
        f'<p class="sf-ask">Is the formalization below faithful to this record, and could a robot really do its task?</p></div>'
    )
