"""`process_record`: one record through extraction and generation to its state in the run ledger.

Idempotent and resumable: the record's ledger row and transitions are read once, first, and carried
(`RecordState`, which writes each transition; a record past generation is returned as is, an
"extracted" one continues from its persisted extraction), every LLM call goes through the
client's cache, and the task folder appears in one rename, so a re-run after a crash repeats no
finished call and never sees half a task. With the formalization review on, an extracted record
waits for it (`_formalization_review`) and is generated once the review has accepted it.

    <run>/work/<record_id>/extraction.json   the extractor's answer (the ledger holds it from the start)
    <run>/work/<record_id>/rounds.json       every round: reply, checks, judge, feedback, tokens
                                             (both written when the record ends)
    <run>/work/<record_id>/formalization.json         what the formalization review is shown
    <run>/work/<record_id>/formalization_review.json  its verdict (while it waits, the votes so far)
    <run>/work/<record_id>/round-<n>/        candidates while the record is being generated
    <run>/tasks/<record_id>/                 the checked task (renamed from its candidate)
    <run>/rejected/<record_id>/              the last attempt of a rejected record
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from safeforge.common.errors import StorageError
from safeforge.common.files import json_text, write_atomically
from safeforge.generation._calls import add_costs, add_tokens
from safeforge.generation._check import Checker, settings_check
from safeforge.generation._extract import STAGE as EXTRACT_STAGE
from safeforge.generation._extract import Extraction, extract_danger
from safeforge.generation._formalization_review import accepted_extraction, formalization_verdict, hold_for_review, reviewed
from safeforge.generation._generate import GenerationOutcome, candidate_metadata, generate_task, llm_failure
from safeforge.generation._judge import STAGE as JUDGE_STAGE
from safeforge.generation._prompts import PromptSet, load_prompts
from safeforge.generation._settings import GenerationSettings
from safeforge.generation._spoc_target import spoc_target
from safeforge.llm import EndpointKind, LLMClient, LLMError
from safeforge.llm.prompts import prompts_dir
from safeforge.runs.ledger import RecordState, RunStore, Transition, TransitionError
from safeforge.sources import Record
from safeforge.task.checks import checked_metadata
from safeforge.task.metadata import CheckOutcome, Provenance, QualityJudge
from safeforge.task.writer import complete_staged, install

WORK_DIR = "work"
REJECTED_DIR = "rejected"
EXTRACTION_FILE = "extraction.json"
ROUNDS_FILE = "rounds.json"
ACTIVE_STATES = ("pending", "extracted")
_USABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")

logger = logging.getLogger("safeforge.generation")


@dataclass(frozen=True)
class RunContext:
    """What every record of a run is processed with, loaded once per run (and once per worker
    process): the stage settings (their prompts folder resolved), the prompts and the execution check."""

    settings: GenerationSettings
    prompts: PromptSet
    checker: Checker

    @classmethod
    def load(cls, settings: GenerationSettings, checker: Checker | None = None) -> RunContext:
        """The context of `settings`; `checker` None: the settings' check. A missing or broken
        template raises here, before any record."""
        settings = settings.model_copy(update={"prompts_dir": prompts_dir(settings.prompts_dir)})
        return cls(settings, load_prompts(settings.prompts_dir), checker or settings_check(settings))


ProcessRecord = Callable[[Record, RunStore, LLMClient, RunContext], Awaitable[str]]
"""How one record is processed: `process_record` itself, or a wrapper (a Prefect task) around it."""


async def process_record(record: Record, store: RunStore, client: LLMClient, context: RunContext) -> str:
    """Take one record to a final state for generation and return it: "no_danger", "checked",
    "rejected_by_checks" or "error", or "awaiting_formalization_review" when the settings ask for
    the formalization review and it has not accepted the record yet (or the later state it already has)."""
    settings, prompts = context.settings, context.prompts
    rid = record.record_id
    state = store.ledger.record_state(rid, record.source, record.origin)
    if state.state not in ACTIVE_STATES:
        return state.state
    if not _USABLE_ID.fullmatch(rid) or ".." in rid:
        return _fail(state, f"record id {rid!r} cannot name a task folder (letters, digits, _ . - only)")
    work = store.root / WORK_DIR / rid
    if state.state == "pending" and (accepted := accepted_extraction(state)) is not None:
        # retried after the formalization review accepted it: the formalization it accepted, not a new one
        state.move("extracted", "the extraction the formalization review accepted", detail=accepted)
    if state.state == "pending":
        try:
            extraction = await extract_danger(record, client, settings, prompts.extract)
        except LLMError as err:
            return _fail(state, llm_failure(EXTRACT_STAGE, err))
        if extraction.result.status == "NO_DANGER":
            state.move("no_danger", extraction.result.reason, detail=extraction.to_dict())
            return "no_danger"
        state.move("extracted", "danger extracted", detail=extraction.to_dict())
    else:
        try:
            extraction = _extraction_of(state.history, rid)
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            return _fail(state, f"the persisted extraction cannot be read: {exc}")
    formalization = extraction.result.danger_formalization
    assert formalization is not None  # DANGER_EXTRACTED always has one (schema rule)
    if settings.review_formalizations and not reviewed(state):
        return await asyncio.to_thread(hold_for_review, store, state, record, extraction)
    # a task for a SPOC scene where the danger can live in one; its timing dangers are exempt from the safety effort
    target = spoc_target(record, formalization) if settings.spoc_targeting else None
    waivers = target.waivers() if target else ()
    outcome = await generate_task(record, formalization, client, settings, prompts, work, context.checker, waivers, target)
    endpoint = await client.endpoint_kind()
    # files and ledger writes in a worker thread: the event loop keeps other records' calls going
    return await asyncio.to_thread(_finish, record, store, state, settings, prompts, extraction, outcome, endpoint)


async def process_safely(process: ProcessRecord, record: Record, store: RunStore, client: LLMClient, context: RunContext) -> str:
    """`process` on one record; if it raises, the record ends in "error" with the reason in one
    line (the traceback goes to the debug log) and the run goes on. Storage that cannot be written
    (a full disk) stops the run instead: the record keeps its state, and resumes with the run."""
    try:
        return await process(record, store, client, context)
    except StorageError:
        raise
    except Exception as exc:  # one record's failure never stops the run
        reason = f"unexpected failure: {type(exc).__name__}: {exc}"
        logger.error("record %s failed: %s", record.record_id, reason)
        logger.debug("record %s failed", record.record_id, exc_info=True)
        return end_in_error(store, record.record_id, reason)


def end_in_error(store: RunStore, record_id: str, reason: str) -> str:
    """Move a record whose processing broke off to "error" and return its state: "error", or the
    state it keeps when that cannot become error."""
    try:
        store.ledger.transition(record_id, "error", reason)
        return "error"
    except TransitionError:
        row = store.ledger.get(record_id)
        return row.state if row else "error"


def _finish(
    record: Record,
    store: RunStore,
    state: RecordState,
    settings: GenerationSettings,
    prompts: PromptSet,
    extraction: Extraction,
    outcome: GenerationOutcome,
    endpoint: EndpointKind | None,
) -> str:
    """Record the rounds, put the task (or the rejected attempt) in place, move the ledger, and
    remove the candidates left in the work folder."""
    rid = record.record_id
    work = store.root / WORK_DIR / rid
    try:
        work.mkdir(parents=True, exist_ok=True)  # none yet when the first generate call failed
        write_atomically(work / EXTRACTION_FILE, json_text(extraction.to_dict()) + "\n")
        write_atomically(work / ROUNDS_FILE, json_text([r.full() for r in outcome.rounds]) + "\n")
        summary = _summary(extraction, outcome, paid=endpoint == "real")
        if outcome.error is not None:
            return _fail(state, outcome.error, detail=summary)
        if outcome.passed:
            assert outcome.candidate is not None
            _write_task_metadata(outcome.candidate, record, store, state, extraction, outcome, summary, prompts, endpoint)
            install(outcome.candidate, store.task_dir(rid))
            reviewed = " and the quality review" if settings.judge_enabled else ""
            state.move("checked", f"passed the checks{reviewed} in round {len(outcome.rounds)}", detail=summary, task_id=rid)
            return "checked"
        if settings.keep_rejected and outcome.candidate is not None:
            shutil.copy2(work / ROUNDS_FILE, outcome.candidate / ROUNDS_FILE)
            install(outcome.candidate, store.root / REJECTED_DIR / rid)
        state.move("rejected_by_checks", outcome.failure, detail=summary)
        return "rejected_by_checks"
    finally:
        for candidate in work.glob("round-*"):
            shutil.rmtree(candidate, ignore_errors=True)


def load_extraction(store: RunStore, record_id: str) -> Extraction:
    """The persisted extraction of an "extracted" record (the ledger's detail of that transition)."""
    return _extraction_of(store.ledger.history(record_id), record_id)


def _extraction_of(history: list[Transition], record_id: str) -> Extraction:
    found = next((t for t in reversed(history) if t.to_state == "extracted" and t.detail), None)
    if found is None or found.detail is None:
        raise KeyError(f"the ledger has no extraction for {record_id}")
    return Extraction.from_dict(found.detail)


def _fail(state: RecordState, reason: str, detail: dict | None = None) -> str:
    state.move("error", reason, detail=detail)
    return "error"


def _summary(extraction: Extraction, outcome: GenerationOutcome, paid: bool) -> dict[str, Any]:
    """Rounds, tokens and cost; without `paid` (a replayed endpoint, or one not known) no cost."""
    return {
        "rounds": [r.provenance() | ({} if paid else {"cost_usd": None}) for r in outcome.rounds],
        "tokens": add_tokens(extraction.call.tokens, *(r.tokens for r in outcome.rounds)),
        "cost_usd": add_costs(extraction.call.cost_usd, *(r.cost_usd for r in outcome.rounds)) if paid else None,
    }


def _write_task_metadata(
    folder: Path,
    record: Record,
    store: RunStore,
    state: RecordState,
    extraction: Extraction,
    outcome: GenerationOutcome,
    summary: dict[str, Any],
    prompts: PromptSet,
    endpoint: EndpointKind | None,
) -> None:
    """Complete the candidate: the derived basic PDDL, and metadata.json with what the checks found,
    the quality judge's verdict and the provenance."""
    report = outcome.report
    assert report is not None and report.basic_pddl is not None
    last = outcome.rounds[-1]
    formalization = extraction.result.danger_formalization
    assert formalization is not None  # a generated record's extraction has one
    extraction_call = extraction.call.to_dict()
    if endpoint != "real":  # replayed, or the endpoint unknown: no cost was paid that we know of
        extraction_call["cost_usd"] = None
    waived = {r.name for r in report.results if r.waived}
    used = [w for w in outcome.waivers if w.check in waived]  # a task that meets the rule keeps no waiver
    metadata = checked_metadata(candidate_metadata(record.record_id, formalization, used, outcome.target), report).model_copy(
        update={
            "checks": [CheckOutcome(name=r.name, ok=r.ok, detail=r.detail) for r in report.results],
            "quality_judge": QualityJudge.model_validate(outcome.verdict.model_dump(mode="json")) if outcome.verdict else None,
            "provenance": Provenance(
                source=record.source,
                record_id=record.record_id,
                origin=record.origin,
                record_text=record.text,
                record_metadata=record.metadata,
                run=store.name,
                generator="safeforge generate",
                models={
                    EXTRACT_STAGE: extraction.call.model,
                    "generate": last.call.model,
                    JUDGE_STAGE: last.judge_call.model if last.judge_call else None,
                },
                llm_endpoint=endpoint,
                prompt_hashes=prompts.hashes(),
                extraction={key: extraction_call[key] for key in ("prompt_hash", "response_sha", "tokens", "cost_usd", "cache_hit")},
                extraction_attempts=extraction.call.attempts,
                formalization_review=formalization_verdict(state),
                rounds=summary["rounds"],
                attempts=len(outcome.rounds),
                tokens=summary["tokens"],
                cost_usd=summary["cost_usd"],
            ),
        }
    )
    complete_staged(folder, metadata, report.basic_pddl)
