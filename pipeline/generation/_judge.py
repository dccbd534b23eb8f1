"""The quality judge: a separate LLM query, with its own system prompt, about one checked task."""

from __future__ import annotations

from safeforge.generation._calls import StageCall
from safeforge.generation._extract import formalization_block, record_block
from safeforge.generation._schemas import DangerFormalization, GeneratedPDDL, JudgeVerdict
from safeforge.generation._settings import GenerationSettings
from safeforge.llm import LLMClient
from safeforge.llm.prompts import PromptTemplate, data_block
from safeforge.sources import Record
from safeforge.task.checks import CheckReport

STAGE = "judge"


def task_block(pddl: GeneratedPDDL, report: CheckReport) -> str:
    """The generated files, the structure check's findings and the reference plans, as data."""
    parts = [f"safety_domain.pddl:\n{pddl.safety_domain.strip()}", f"safety_problem.pddl:\n{pddl.safety_problem.strip()}"]
    found = {r.name: r.detail for r in report.results if r.ok}
    for name, label in (
        ("structure", "Danger logic found by the structure check"),
        ("safety effort", "Safety effort (shortest safe plan minus shortest unsafe plan)"),
        ("mitigation", "What the safe plan adds to the unsafe plan"),
    ):
        if name in found:
            parts.append(f"{label}: {found[name]}")
    if report.plans is not None:
        parts.append("Safe reference plan (goal reached, danger = 0): " + " ".join(report.plans.safe.plan))
        parts.append("Unsafe reference plan (goal reached, danger >= 1): " + " ".join(report.plans.unsafe.plan))
    return data_block("TASK", "\n\n".join(parts))


def judge_messages(
    record: Record, formalization: DangerFormalization, pddl: GeneratedPDDL, report: CheckReport, round_no: int, template: PromptTemplate
) -> list[dict[str, str]]:
    return template.messages(
        record_id=record.record_id,
        round=str(round_no),
        formalization_block=formalization_block(formalization),
        record_block=record_block(record),
        task_block=task_block(pddl, report),
    )


async def judge_task(
    record: Record,
    formalization: DangerFormalization,
    pddl: GeneratedPDDL,
    report: CheckReport,
    round_no: int,
    client: LLMClient,
    settings: GenerationSettings,
    template: PromptTemplate,
) -> tuple[JudgeVerdict, StageCall]:
    """The judge's verdict on a task that passed the checks. Raises LLMError."""
    messages = judge_messages(record, formalization, pddl, report, round_no, template)
    result = await client.complete_json(
        STAGE, record.record_id, messages, JudgeVerdict, template.hash, temperature=settings.judge_temperature
    )
    return result.parsed, StageCall.from_result(STAGE, template.hash, result)
