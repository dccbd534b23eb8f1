"""Dollar cost of a call from a per-model price table (USD per million tokens).

A provider's list prices hold at its own endpoint only (`PROVIDER_HOSTS`): a call to any other
endpoint (the replay server, a local or scripted server, a proxy) has no known price, and its cost
is recorded as unknown (None), unless LLMConfig.prices names the model's price for it."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from safeforge.llm._usage import TokenUsage

logger = logging.getLogger("safeforge.llm")


class ModelPrice(BaseModel):
    """USD per million tokens for one model."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    input: float
    """Uncached input (prompt) tokens."""
    output: float
    """Output (completion) tokens, reasoning tokens included."""
    cached_input: float | None = None
    """Input tokens served from the provider's prompt cache; None = billed as `input`."""


# List prices (USD / 1M tokens) as published by the providers in 2025; override them in
# LLMConfig.prices when they change. DeepSeek bills cache-hit input at a tenth of the price.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "deepseek-chat": ModelPrice(input=0.28, cached_input=0.028, output=0.42),
    "deepseek-reasoner": ModelPrice(input=0.28, cached_input=0.028, output=0.42),
    "gpt-4o": ModelPrice(input=2.50, cached_input=1.25, output=10.00),
    "gpt-4o-mini": ModelPrice(input=0.15, cached_input=0.075, output=0.60),
    "gpt-4.1": ModelPrice(input=2.00, cached_input=0.50, output=8.00),
    "gpt-4.1-mini": ModelPrice(input=0.40, cached_input=0.10, output=1.60),
    "gpt-4.1-nano": ModelPrice(input=0.10, cached_input=0.025, output=0.40),
}


PROVIDER_HOSTS = {"deepseek-": "api.deepseek.com", "gpt-": "api.openai.com"}
"""Model name prefix -> the host whose list prices DEFAULT_PRICES holds."""


def _defaults_at(endpoint: str | None) -> dict[str, ModelPrice]:
    if endpoint is None:
        return dict(DEFAULT_PRICES)
    return {
        model: price
        for model, price in DEFAULT_PRICES.items()
        if any(model.startswith(prefix) and endpoint == host for prefix, host in PROVIDER_HOSTS.items())
    }


class PriceTable:
    """Looks a model up (exactly, or by its longest known prefix, so dated snapshots such as
    `gpt-4o-2024-08-06` find `gpt-4o`) and prices a call's token usage. With `endpoint` (a host),
    the list prices apply only if it is the model's provider's; `prices` apply anywhere."""

    def __init__(self, prices: Mapping[str, ModelPrice] | None = None, *, include_defaults: bool = True, endpoint: str | None = None):
        self._prices = {**(_defaults_at(endpoint) if include_defaults else {}), **(prices or {})}
        self._endpoint = endpoint
        self._warned: set[str] = set()

    def price_for(self, model: str) -> ModelPrice | None:
        if model in self._prices:
            return self._prices[model]
        prefixes = [name for name in self._prices if model.startswith(name + "-")]
        return self._prices[max(prefixes, key=len)] if prefixes else None

    def cost(self, model: str, usage: TokenUsage) -> float | None:
        """Dollars for `usage`, or None (with a one-time warning per model) when unpriced."""
        price = self.price_for(model)
        if price is None:
            if model not in self._warned:
                self._warned.add(model)
                where = f" at {self._endpoint}" if self._endpoint else ""
                logger.warning("no price for model %r%s: the cost of its calls is unknown (recorded as None)", model, where)
            return None
        cached = min(usage.cached, usage.prompt)
        cached_rate = price.input if price.cached_input is None else price.cached_input
        dollars = (usage.prompt - cached) * price.input + cached * cached_rate + usage.completion * price.output
        return dollars / 1_000_000
