"""What the pipeline records about one LLM call: stage, model, prompt hash, response hash, tokens."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from safeforge.llm import LLMResult, TokenUsage


@dataclass(frozen=True)
class StageCall:
    """One completed LLM call of a stage (cache hits report zero tokens and cost)."""

    stage: str
    model: str
    prompt_hash: str
    response_sha: str
    tokens: dict[str, int]
    cost_usd: float | None
    cache_hit: bool
    attempts: int

    @classmethod
    def from_result(cls, stage: str, prompt_hash: str, result: LLMResult) -> StageCall:
        return cls(
            stage,
            result.model,
            prompt_hash,
            response_sha(result.raw_text),
            tokens_dict(result.usage),
            result.cost_usd,
            result.cache_hit,
            result.attempts,
        )

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "tokens": dict(self.tokens)}  # as asdict, without its deep copy (15x the time)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StageCall:
        return cls(**data)


def response_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def tokens_dict(usage: TokenUsage) -> dict[str, int]:
    return {"in": usage.prompt, "out": usage.completion, "cached": usage.cached}


def add_tokens(*parts: dict[str, int]) -> dict[str, int]:
    return {key: sum(part.get(key, 0) for part in parts) for key in ("in", "out", "cached")}


def add_costs(*costs: float | None) -> float | None:
    """The sum, or None when any part has no price."""
    return None if any(c is None for c in costs) else round(sum(costs), 8)  # type: ignore[arg-type]
