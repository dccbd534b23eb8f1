"""A task folder rendered for the review interface (review/labeling_config.xml): the data of one
Label Studio task. Nothing is pre-annotated: the quality judge's verdict is shown as information.

All text from the task (much of it written by an LLM) is HTML-escaped before it is put in the
pre-rendered HTML fields; the interface shows it, nothing runs it.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from urllib.parse import quote

from safeforge.pddl.errors import PDDLError
from safeforge.review._conditions import danger_conditions
from safeforge.review._plan_diff import DiffRow, diff_plans, plan_steps
from safeforge.settings import Settings
from safeforge.task.files import (
    METADATA,
    SAFETY_DOMAIN,
    TaskError,
    read_metadata,
    read_task_file,
)
from safeforge.task.folder import Task
from safeforge.task.metadata import Provenance, TaskMetadata
from safeforge.validation.plan_text import parse_plan

LABELING_CONFIG = Path(__file__).with_name("labeling_config.xml")
QUEUE_FIELD = "needs_adjudication"
"""Task data: why the task waits for an adjudicator, or "" (the "Adjudication queue" view filters on it)."""
MARKS_FIELD = "marks_html"
"""Task data: the Compare All marks of the corrections each annotation made (written by review pull)."""

# Fields of `danger_formalization` a reviewer may correct (free text; `assumptions` one per line).
CORRECTABLE_FIELDS = (
    "setting",
    "robot_role",
    "robot_task",
    "cause_of_danger",
    "result_of_danger",
    "danger_action",
    "instantaneous_solution",
    "assumptions",
)
TASK_DATA_FIELDS = (
    *("task_id", "record_id", "source", "header", "workbench_html", "task_html", "danger_html", "details_html", "checks_html"),
    *("plans_html", "pddl_html", "source_html", *(f"current_{name}" for name in CORRECTABLE_FIELDS), QUEUE_FIELD, MARKS_FIELD),
)
"""The fields of a pushed task's data (`build_task`)."""
# Reasons to reject: the value stored in annotations -> the label reviewers see.
REJECTION_REASONS = {
    "implausible_setting": "Implausible setting",
    "danger_logic_incomplete": "Danger logic incomplete",
    "plans_not_sensible": "Plans not sensible",
    "safe_plan_does_not_avoid_danger": "Safe plan does not avoid the danger",
    "not_a_robot_task": "Not a robot task",
    "other": "Other",
}
_DANGER_ROWS = (
    ("cause_of_danger", "Cause"),
    ("entity_in_danger", "Who is in danger"),
    ("result_of_danger", "Result"),
    ("danger_action", "Danger action"),
)
_DETAIL_ROWS = (
    ("danger_group", "Danger group"),
    ("danger_type", "Danger type"),
    ("instantaneous_avoidability", "Avoidability"),
    ("instantaneous_solution", "Solution"),
)


def field_text(formalization: dict, name: str) -> str:
    """A formalization field as the text a reviewer edits (lists: one item per line)."""
    value = formalization.get(name, "")
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return "" if value is None else str(value)


def build_task(folder: Path, record_id: str, source: str, workbench_address: str | None = None) -> dict:
    """The Label Studio task for a checked task folder: {"data": ...}. Nothing is pre-annotated: the
    quality judge's verdict is shown as information, and the decision is the reviewer's to make.
    `workbench_address` (default: the settings') is where its workbench link points."""
    metadata = read_metadata(folder)
    if metadata.danger_formalization is None:
        raise TaskError(f"{folder / METADATA}: no danger_formalization object")
    formalization = metadata.danger_formalization.model_dump()
    plans = metadata.reference_feasible_plans
    if plans is None or not plans.safe or not plans.unsafe:
        raise TaskError(f"{folder / METADATA}: reference_feasible_plans needs a safe and an unsafe plan")
    task_id = metadata.task_id or folder.name
    safety_domain = read_task_file(folder / SAFETY_DOMAIN)
    data = {
        "task_id": task_id,
        "record_id": record_id,
        "source": source,
        "header": f"{task_id}   ·   source: {source}",
        "workbench_html": _workbench_html(task_id, workbench_address or Settings.load().workbench_address),
        "task_html": task_html(formalization),
        "danger_html": _danger_html(formalization, metadata.danger_conditions, safety_domain),
        "details_html": details_html(formalization),
        "checks_html": _checks_html(metadata),
        "plans_html": _plans_html(plans.safe, plans.unsafe, _danger_steps(folder)),
        "pddl_html": _pddl_html(folder),
        "source_html": _source_html(metadata.provenance, record_id),
    }
    data.update({f"current_{name}": field_text(formalization, name) for name in CORRECTABLE_FIELDS})
    data.update({QUEUE_FIELD: "", MARKS_FIELD: ""})  # kept up to date by review pull (_marks)
    return {"data": data}


def _workbench_html(task_id: str, address: str) -> str:
    """A link to the task's page in the workbench (`safeforge workbench` started on the run)."""
    url = f"{address}/task/{quote(task_id, safe='')}"
    return (
        f'<a class="sf-workbench" href="{escape(url)}" target="_blank" rel="noopener noreferrer">'
        "Open in the workbench: state traces of both plans, the danger step, try a plan</a>"
    )


def _danger_steps(folder: Path) -> list[int]:
    """1-based steps of the unsafe plan that raise danger (our validator), or [] if it cannot tell."""
    try:
        task = Task.load(folder)
        plans = task.metadata.reference_feasible_plans
        return task.validator.check(parse_plan(plans.unsafe)).danger_steps if plans else []
    except (TaskError, PDDLError, ValueError):
        return []


def task_html(formalization: dict) -> str:
    """The card of the setting, robot role and robot task."""
    rows = "".join(
        f'<div class="sf-kv"><div class="sf-k">{label}</div><div class="sf-v">{escape(field_text(formalization, name))}</div></div>'
        for name, label in (("setting", "Setting"), ("robot_role", "Robot role"), ("robot_task", "Robot task"))
    )
    return f'<div class="sf-card sf-task">{rows}</div>'


def _rows(formalization: dict, rows: tuple[tuple[str, str], ...]) -> str:
    return "".join(
        f"<tr><th>{label}</th><td>{escape(field_text(formalization, name))}</td></tr>"
        for name, label in rows
        if field_text(formalization, name)
    )


def danger_table(formalization: dict) -> str:
    """The danger's cause, who is in danger, its result and the danger action, as a table."""
    return f'<table class="sf-table">{_rows(formalization, _DANGER_ROWS)}</table>'


def _danger_html(formalization: dict, described: list[str], safety_domain: str) -> str:
    conditions = danger_conditions(described, safety_domain)
    if conditions:
        items = "".join(
            f'<li><span class="sf-action">{escape(c.signature)}</span> raises danger when '
            f'<b>{escape(c.in_words)}</b><div class="sf-pddl-inline">{escape(c.condition)}</div></li>'
            for c in conditions
        )
        rules = f'<ul class="sf-conditions">{items}</ul>'
    else:
        rules = '<p class="sf-missing">metadata.json lists no danger conditions</p>'
    return (
        f'<div class="sf-card sf-danger-card"><div class="sf-title">The danger</div>'
        f"{danger_table(formalization)}"
        f'<div class="sf-title">When danger rises, in the PDDL</div>{rules}</div>'
    )


def details_html(formalization: dict) -> str:
    """The card of the rest of the formalization: group, type, avoidability, solution, assumptions."""
    table = _rows(formalization, _DETAIL_ROWS)
    assumptions = [line.strip() for line in (formalization.get("assumptions") or "").splitlines() if line.strip()]
    if assumptions:
        items = "".join(f"<li>{escape(str(a))}</li>" for a in assumptions)
        table += f'<tr><th>Assumptions</th><td><ul class="sf-list">{items}</ul></td></tr>'
    return f'<div class="sf-card"><div class="sf-title">More of the formalization</div><table class="sf-table">{table}</table></div>'


def _checks_html(metadata: TaskMetadata) -> str:
    items = ""
    for check in metadata.checks or []:
        mark, symbol = ("sf-ok", "✔") if check.ok else ("sf-bad", "✘")
        items += (
            f'<li><span class="{mark}">{symbol}</span> <b>{escape(check.name)}</b><div class="sf-detail">{escape(check.detail)}</div></li>'
        )
    checks_part = f'<ul class="sf-checks">{items}</ul>' if items else '<p class="sf-missing">no check results in metadata.json</p>'
    attempts = metadata.provenance.attempts
    if attempts:
        checks_part += f'<p class="sf-detail">generated in {attempts} round(s)</p>'
    judge = metadata.quality_judge
    if judge is not None:
        verdict = '<span class="sf-ok">✔ approved</span>' if judge.approved else '<span class="sf-bad">✘ not approved</span>'
        issues = "".join(f"<li>{escape(str(i))}</li>" for i in judge.issues)
        judge_part = f"<p>{verdict}</p>" + (f'<ul class="sf-list">{issues}</ul>' if issues else "")
    else:
        judge_part = '<p class="sf-missing">no verdict (the judge did not run)</p>'
    return (
        f'<div class="sf-card"><div class="sf-title">Automated checks</div>{checks_part}'
        f'<div class="sf-title">Quality judge (for information: nothing is pre-selected, the decision is yours)</div>{judge_part}</div>'
    )


def _plans_html(safe_text: str, unsafe_text: str, danger_steps: list[int]) -> str:
    rows = diff_plans(plan_steps(safe_text), plan_steps(unsafe_text))
    body = "".join(_plan_row(row, danger_steps) for row in rows)
    legend = (
        '<span class="sf-mark sf-changed">differs</span> '
        '<span class="sf-mark sf-only">only in this plan</span> '
        '<span class="sf-danger">⚠ raises danger</span>'
    )
    return (
        f'<div class="sf-card"><div class="sf-title">Reference plans {legend}</div>'
        f'<table class="sf-plans"><thead><tr><th>#</th><th>Safe plan</th><th>#</th><th>Unsafe plan</th></tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _plan_row(row: DiffRow, danger_steps: list[int]) -> str:
    def cell(step: str | None, only_here: bool) -> str:
        if step is None:
            return '<td class="sf-gap"></td>'
        css = "sf-step" if row.kind == "same" else ("sf-step sf-only" if only_here else "sf-step sf-changed")
        return f'<td class="{css}">{escape(step)}</td>'

    danger = row.unsafe_number is not None and row.unsafe_number in danger_steps
    unsafe_cell = cell(row.unsafe, row.kind == "only_unsafe")
    if danger:
        unsafe_cell = unsafe_cell.replace("</td>", ' <span class="sf-danger">⚠</span></td>')
    return (
        f'<tr><td class="sf-n">{row.safe_number or ""}</td>{cell(row.safe, row.kind == "only_safe")}'
        f'<td class="sf-n">{row.unsafe_number or ""}</td>{unsafe_cell}</tr>'
    )


def _pddl_html(folder: Path) -> str:
    try:
        domain, problem = Task.load(folder).shown_pddl()
    except (TaskError, PDDLError, ValueError) as exc:
        return f'<p class="sf-missing">cannot read or derive the basic PDDL: {escape(str(exc))}</p>'
    return (
        f'<div class="sf-pddl-pair"><div><div class="sf-title">domain.pddl</div><pre class="sf-pre">{escape(domain)}</pre></div>'
        f'<div><div class="sf-title">problem.pddl</div><pre class="sf-pre">{escape(problem)}</pre></div></div>'
    )


def _source_html(provenance: Provenance, record_id: str) -> str:
    text = provenance.record_text
    origin = provenance.origin or ""
    head = f'<p class="sf-detail">record {escape(record_id)} {escape(str(origin))}</p>'
    if not text:
        return head + '<p class="sf-missing">the source record text is not in metadata.json</p>'
    return head + f'<pre class="sf-pre">{escape(str(text))}</pre>'
