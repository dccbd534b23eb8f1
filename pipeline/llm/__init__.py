"""LLM access: an async client for any OpenAI-compatible endpoint, with structured output,
retries, rate limits, a response cache and a call ledger (see README, "LLM access").

The replay server (hand-written responses, for tests and offline runs) is in
`pipeline.llm.replay_server`.
"""

from pipeline.llm._cache import CachedResponse, CacheRequest, ResponseCache
from pipeline.llm._client import LLMClient, LLMResult
from pipeline.llm._config import LLMConfig
from pipeline.llm._errors import ErrorReason, LLMError
from pipeline.llm._ledger import CallLedger, LedgerRow, StageSummary
from pipeline.llm._prices import DEFAULT_PRICES, ModelPrice, PriceTable
from pipeline.llm._usage import TokenUsage

__all__ = [
    "DEFAULT_PRICES",
    "CacheRequest",
    "CachedResponse",
    "CallLedger",
    "ErrorReason",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "LLMResult",
    "LedgerRow",
    "ModelPrice",
    "PriceTable",
    "ResponseCache",
    "StageSummary",
    "TokenUsage",
]
