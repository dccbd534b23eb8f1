"""Dollar cost of a call from a per-model price table (USD per million tokens)."""

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


class PriceTable:
    """Looks a model up (exactly, or by its longest known prefix, so dated snapshots such as
    `gpt-4o-2024-08-06` find `gpt-4o`) and prices a call's token usage."""

    def __init__(self, prices: Mapping[str, ModelPrice] | None = None, *, include_defaults: bool = True):
        self._prices = {**(DEFAULT_PRICES if include_defaults else {}), **(prices or {})}
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
                logger.warning("no price for model %r: its calls are recorded with cost None", model)
            return None
        cached = min(usage.cached, usage.prompt)
        cached_rate = price.input if price.cached_input is None else price.cached_input
        dollars = (usage.prompt - cached) * price.input + cached * cached_rate + usage.completion * price.output
        return dollars / 1_000_000
