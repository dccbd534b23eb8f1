"""The code generator's rounds: write PDDL, run the execution check, ask the quality judge, and
send any failure back into the generator's conversation, up to `max_rounds` times."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from safeforge.generation._calls import StageCall, add_costs, add_tokens
from safeforge.generation._check import Checker, write_and_check
from safeforge.generation._extract import formalization_block, record_block
from safeforge.generation._feedback import (
    check_problems,
    earlier_failures,
    echoed_reply,
    failure_summary,
    judge_problems,
    render_feedback,
)
from safeforge.generation._judge import judge_task
from safeforge.generation._prompts import PromptSet
from safeforge.generation._schemas import DangerFormalization, GeneratedPDDL, JudgeVerdict
from safeforge.generation._settings import GenerationSettings
from safeforge.generation._spoc_target import NO_TARGET, SpocTarget
from safeforge.llm import LLMClient, LLMError
from safeforge.sources import Record
from safeforge.task.checks import CheckReport
from safeforge.task.metadata import CheckWaiver, TaskMetadata
from safeforge.task.metadata import DangerFormalization as TaskFormalization
from safeforge.task.writer import write_task

STAGE = "generate"
MAX_REASON_CHARS = 600


@dataclass
class Round:
    """One generation round: the generator's reply, the checks, the judge, the feedback it led to."""

    round: int
    call: StageCall
    response: str
    checks: list[dict[str, Any]]
    judge: dict[str, Any] | None = None
    judge_call: StageCall | None = None
    failure: str | None = None
    feedback: str | None = None

    @property
    def tokens(self) -> dict[str, int]:
        return add_tokens(self.call.tokens, *([self.judge_call.tokens] if self.judge_call else []))

    @property
    def cost_usd(self) -> float | None:
        return add_costs(self.call.cost_usd, *([self.judge_call.cost_usd] if self.judge_call else []))

    def provenance(self) -> dict[str, Any]:
        """The compact record kept in metadata.json and the ledger."""
        return {
            "round": self.round,
            "prompt_hash": self.call.prompt_hash,
            "response_sha": self.call.response_sha,
            "checks": self.checks,
            "judge": self.judge,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "cache_hit": self.call.cache_hit and (self.judge_call is None or self.judge_call.cache_hit),
        }

    def full(self) -> dict[str, Any]:
        """Everything, for <run>/work/<record_id>/rounds.json: the reply and the feedback too."""
        return {
            **self.provenance(),
            "response": self.response,
            "failure": self.failure,
            "feedback": self.feedback,
            "generate_call": self.call.to_dict(),
            "judge_call": self.judge_call.to_dict() if self.judge_call else None,
        }


@dataclass
class GenerationOutcome:
    """How the rounds ended: passed (the last candidate is the task) or not (the last failure)."""

    passed: bool
    rounds: list[Round] = field(default_factory=list)
    candidate: Path | None = None
    report: CheckReport | None = None
    verdict: JudgeVerdict | None = None
    failure: str = ""
    """The last check or review failure (when not passed)."""
    error: str | None = None
    """Set when an LLM call failed for good: the stage and the reason."""
    waivers: tuple[CheckWaiver, ...] = ()
    """The waivers the record's task was offered (its metadata keeps those its checks used)."""
    target: SpocTarget | None = None
    """The SPOC scene the task was generated for (its metadata records it)."""


def llm_failure(stage: str, err: LLMError) -> str:
    """The reason recorded for a record whose LLM call failed for good."""
    return f"{stage}: LLM call failed ({err.reason}, {err.attempts} attempt(s)): {err.message[:MAX_REASON_CHARS]}"


def generation_messages(
    record: Record, formalization: DangerFormalization, prompts: PromptSet, target: SpocTarget | None = None
) -> list[dict[str, str]]:
    """The generator's system prompt and the record's user message, which ends with the SPOC scene
    the task targets (or says there is none)."""
    return prompts.generate.messages(
        record_id=record.record_id,
        formalization_block=formalization_block(formalization),
        record_block=record_block(record),
        spoc_target=target.prompt_block() if target else NO_TARGET,
    )


def candidate_metadata(
    task_id: str, formalization: DangerFormalization, waivers: Sequence[CheckWaiver] = (), target: SpocTarget | None = None
) -> TaskMetadata:
    """The metadata a candidate starts with, before the checks add what they found."""
    return TaskMetadata(
        task_id=task_id,
        danger_formalization=TaskFormalization.model_validate(formalization.model_dump(mode="json")),
        waivers=list(waivers),
        spoc=target.metadata() if target else None,
    )


def write_candidate(folder: Path, pddl: GeneratedPDDL, metadata: TaskMetadata) -> None:
    """A fresh task folder holding the generated files and the metadata the checks start from."""
    write_task(folder, pddl.safety_domain.strip(), pddl.safety_problem.strip(), metadata, replace=True)


async def generate_task(
    record: Record,
    formalization: DangerFormalization,
    client: LLMClient,
    settings: GenerationSettings,
    prompts: PromptSet,
    work_dir: Path,
    checker: Checker,
    waivers: Sequence[CheckWaiver] = (),
    target: SpocTarget | None = None,
) -> GenerationOutcome:
    """Run the rounds for one record; candidates are written to work_dir/round-<n>/. An LLM call
    that fails for good ends the rounds with `error` set. `waivers` exempt the record's task from
    checks (e.g. "safety effort" for a SPOC timing danger): its metadata carries them, the checks
    honour them. With a `target`, the generator is asked for a task in that AI2-THOR scene, and
    the candidate's `metadata.spoc` makes the default check require that it exports to SPOC."""
    first_messages = messages = generation_messages(record, formalization, prompts, target)
    outcome = GenerationOutcome(passed=False, waivers=tuple(waivers), target=target)
    metadata = candidate_metadata(record.record_id, formalization, waivers, target)  # every round's candidate starts from it
    for round_no in range(1, settings.max_rounds + 1):
        prompt_hash = prompts.generate.hash if round_no == 1 else f"{prompts.generate.hash}+{prompts.feedback.hash}"
        try:
            result = await client.complete_json(
                STAGE,
                record.record_id,
                messages,
                GeneratedPDDL,
                prompt_hash,
                temperature=settings.generate_temperature,
                max_tokens=settings.generate_max_tokens,
            )
        except LLMError as err:
            outcome.error = llm_failure(f"{STAGE} (round {round_no})", err)
            return outcome
        pddl = result.parsed
        candidate = work_dir / f"round-{round_no}"
        # the files in a worker thread, as every file of a record: the event loop keeps other records' calls going
        report = await write_and_check(checker, candidate, partial(write_candidate, candidate, pddl, metadata))
        current = Round(round_no, StageCall.from_result(STAGE, prompt_hash, result), result.raw_text, [r.to_dict() for r in report.results])
        outcome.rounds.append(current)
        verdict = None
        if report.ok and settings.judge_enabled:
            try:
                verdict, current.judge_call = await judge_task(
                    record, formalization, pddl, report, round_no, client, settings, prompts.judge
                )
            except LLMError as err:
                outcome.error = llm_failure(f"judge (round {round_no})", err)
                return outcome
            current.judge = verdict.model_dump(mode="json")
        outcome.candidate, outcome.report, outcome.verdict = candidate, report, verdict
        if report.ok and (verdict is None or verdict.approved):
            outcome.passed = True
            return outcome
        current.failure = outcome.failure = f"round {round_no}/{settings.max_rounds}: {failure_summary(report, verdict)}"
        if round_no < settings.max_rounds:
            problems = check_problems(report, pddl) if not report.ok or verdict is None else judge_problems(verdict)
            problems += earlier_failures(outcome.rounds[:-1])
            current.feedback = render_feedback(prompts.feedback, round_no + 1, problems)
            # what the model needs, not the whole conversation: the record and formalization, its
            # latest candidate, and the feedback so far (so a round costs about the same as the last)
            previous = echoed_reply(result.raw_text, report, pddl)
            messages = [*first_messages, {"role": "assistant", "content": previous}, {"role": "user", "content": current.feedback}]
    return outcome
