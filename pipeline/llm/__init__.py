"""LLM access: an async client for any OpenAI-compatible endpoint, with structured output,
retries, rate limits, a response cache and a call ledger (see README, "LLM access").

The replay server (hand-written responses, for tests and offline runs) is in
`pipeline.llm.replay_server`.
"""
from pipeline.common.lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
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
})
