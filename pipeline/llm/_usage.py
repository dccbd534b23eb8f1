"""Token counts of one call, read from an OpenAI-compatible `usage` block."""

from __future__ import annotations

from dataclasses import dataclass

from openai.types import CompletionUsage


@dataclass(frozen=True)
class TokenUsage:
    """Tokens of one or more calls: prompt (input), completion (output), cached (input served
    from the provider's prompt cache, part of `prompt`)."""

    prompt: int = 0
    completion: int = 0
    cached: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(self.prompt + other.prompt, self.completion + other.completion, self.cached + other.cached)

    @property
    def total(self) -> int:
        return self.prompt + self.completion

    @classmethod
    def from_completion_usage(cls, usage: CompletionUsage | None) -> TokenUsage:
        """Cached tokens come from `prompt_tokens_details.cached_tokens` (OpenAI, vLLM) or
        DeepSeek's `prompt_cache_hit_tokens`."""
        if usage is None:
            return cls()
        details = usage.prompt_tokens_details
        cached = details.cached_tokens if details is not None else None
        if cached is None:
            cached = (usage.model_extra or {}).get("prompt_cache_hit_tokens")
        return cls(usage.prompt_tokens or 0, usage.completion_tokens or 0, int(cached or 0))
