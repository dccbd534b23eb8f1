"""The danger extractor: one record in, DANGER_EXTRACTED with a formalization or NO_DANGER out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from safeforge.common.files import json_text
from safeforge.generation._calls import StageCall
from safeforge.generation._schemas import DangerFormalization, ExtractionResult
from safeforge.generation._settings import GenerationSettings
from safeforge.llm import LLMClient
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
    """Ask the extractor about `record` (cached). Raises LLMError."""
    result = await client.complete_json(
        STAGE,
        record.record_id,
        extraction_messages(record, template),
        ExtractionResult,
        template.hash,
        temperature=settings.extract_temperature,
    )
    return Extraction(result.parsed, StageCall.from_result(STAGE, template.hash, result))
