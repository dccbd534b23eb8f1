"""The danger extractor: one record in, DANGER_EXTRACTED with a formalization or NO_DANGER out."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from safeforge.common.files import json_text
from safeforge.generation._calls import StageCall, add_costs
from safeforge.generation._schemas import DangerFormalization, ExtractionResult
from safeforge.generation._settings import GenerationSettings
from safeforge.llm import LedgerRow, LLMClient
from safeforge.llm.prompts import PromptTemplate, data_block
from safeforge.sources import SOURCES, Record

STAGE = "extract"


@dataclass(frozen=True)
class Extraction:
    """The extractor's validated answer and the call that produced it (persisted for resuming)."""

    result: ExtractionResult
    call: StageCall

    def to_dict(self) -> dict[str, Any]:
        return {"result": self.result.model_dump(mode="json"), "call": self.call.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Extraction:
        return cls(ExtractionResult.model_validate(data["result"]), StageCall.from_dict(data["call"]))


def record_block(record: Record) -> str:
    return data_block("RECORD", record.text)


def formalization_block(formalization: DangerFormalization) -> str:
    return data_block("FORMALIZATION", json_text(formalization.model_dump(mode="json")))


def extraction_messages(record: Record, template: PromptTemplate) -> list[dict[str, str]]:
    """The system prompt, unchanged, and a user message with the record inside a data block."""
    spec = SOURCES.get(record.source)
    return template.messages(
        record_id=record.record_id,
        source=record.source,
        source_title=spec.title if spec else record.source,
        record_block=record_block(record),
    )


async def extract_danger(record: Record, client: LLMClient, settings: GenerationSettings, template: PromptTemplate) -> Extraction:
    """Ask the extractor about `record` (cached). Raises LLMError. An answer from the cache is
    recorded as the call that made it, when the call ledger holds that call (a run resumed after
    a kill between the answer and the record's next state records what it would have uninterrupted)."""
    result = await client.complete_json(
        STAGE,
        record.record_id,
        extraction_messages(record, template),
        ExtractionResult,
        template.hash,
        temperature=settings.extract_temperature,
    )
    call = StageCall.from_result(STAGE, template.hash, result)
    return Extraction(result.parsed, _as_made(call, client.ledger.rows(STAGE, record.record_id)) if call.cache_hit else call)


def _as_made(call: StageCall, rows: list[LedgerRow]) -> StageCall:
    """A cached `call` as the latest call of the ledger `rows` that succeeded: its attempts (the
    rows up to its answer), their tokens and cost."""
    answered = [index for index, row in enumerate(rows) if row.outcome == "ok"]
    if not answered:
        return call
    last = rows[answered[-1]]
    attempts = rows[answered[-1] - last.attempt + 1 : answered[-1] + 1]
    if [row.attempt for row in attempts] != list(range(1, last.attempt + 1)):
        return call  # not one call's rows: keep the cache hit as it is
    tokens = {
        "in": sum(r.tokens_in for r in attempts),
        "out": sum(r.tokens_out for r in attempts),
        "cached": sum(r.tokens_cached for r in attempts),
    }
    return replace(call, tokens=tokens, cost_usd=add_costs(*(r.cost_usd for r in attempts)), cache_hit=False, attempts=last.attempt)
