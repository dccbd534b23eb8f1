"""LLM access: an async client for any OpenAI-compatible endpoint, with structured output,
retries, rate limits, a response cache and a call ledger (see README, "LLM access").

The replay server (hand-written responses, for tests and offline runs) is in
`safeforge.llm.replay_server`.
"""

from typing import TYPE_CHECKING

from safeforge.common.lazy import lazy_exports

if TYPE_CHECKING:  # the public names; at run time each loads on first use (lazy_exports reads this block)
    from ._cache import CachedResponse, CacheRequest, ResponseCache
    from ._client import EndpointKind, LLMClient, LLMResult
    from ._config import LLMConfig
    from ._errors import ErrorReason, LLMError
    from ._ledger import CallLedger, LedgerRow, StageSummary
    from ._prices import DEFAULT_PRICES, ModelPrice, PriceTable
    from ._usage import TokenUsage

__all__ = [
    "CachedResponse",
    "CacheRequest",
    "ResponseCache",
    "EndpointKind",
    "LLMClient",
    "LLMResult",
    "LLMConfig",
    "ErrorReason",
    "LLMError",
    "CallLedger",
    "LedgerRow",
    "StageSummary",
    "DEFAULT_PRICES",
    "ModelPrice",
    "PriceTable",
    "TokenUsage",
]
__getattr__, __dir__ = lazy_exports(__name__)
