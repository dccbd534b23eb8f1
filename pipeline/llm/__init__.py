"""LLM access: an async client for any OpenAI-compatible endpoint, with structured output,
retries, rate limits, a response cache and a call ledger (see README, "LLM access").

The replay server (hand-written responses, for tests and offline runs) is in
`pipeline.llm.replay_server`.
"""

from typing import TYPE_CHECKING

from pipeline.common.lazy import lazy_exports

if TYPE_CHECKING:  # the names below, for type checkers; at run time they load on first use
    from ._cache import CachedResponse, CacheRequest, ResponseCache
    from ._client import LLMClient, LLMResult
    from ._config import LLMConfig
    from ._errors import ErrorReason, LLMError
    from ._ledger import CallLedger, LedgerRow, StageSummary
    from ._prices import DEFAULT_PRICES, ModelPrice, PriceTable
    from ._usage import TokenUsage

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "CachedResponse": "._cache",
        "CacheRequest": "._cache",
        "ResponseCache": "._cache",
        "LLMClient": "._client",
        "LLMResult": "._client",
        "LLMConfig": "._config",
        "ErrorReason": "._errors",
        "LLMError": "._errors",
        "CallLedger": "._ledger",
        "LedgerRow": "._ledger",
        "StageSummary": "._ledger",
        "DEFAULT_PRICES": "._prices",
        "ModelPrice": "._prices",
        "PriceTable": "._prices",
        "TokenUsage": "._usage",
    },
)
