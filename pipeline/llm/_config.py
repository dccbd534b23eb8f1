"""Configuration of the LLM client: endpoint, models per stage, retries, limits, cache."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from safeforge.llm._prices import ModelPrice
from safeforge.settings import Settings

StructuredOutput = Literal["json_schema", "json_object", "auto"]

REPLAY_OWNER = "safeforge-replay"
"""The owner the replay server names for every model (GET /models): how an endpoint is told to be it."""


class LLMConfig(BaseModel):
    """Everything the LLM client needs; `from_env()` builds it from environment variables."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    base_url: str = "https://api.openai.com/v1"
    """OpenAI-compatible endpoint (OPENAI_BASE_URL), e.g. https://api.deepseek.com/v1,
    http://localhost:8000/v1 (vLLM) or http://localhost:11434/v1 (Ollama)."""
    api_key: SecretStr | None = None
    """API key (OPENAI_API_KEY); never logged or stored. Local servers may leave it unset."""
    model: str = "gpt-4o-mini"
    """Model used by every stage without its own entry in `stage_models` (SAFEFORGE_MODEL)."""
    stage_models: dict[str, str] = Field(default_factory=dict)
    """Per-stage model overrides, e.g. {"extract": "deepseek-chat"} (SAFEFORGE_MODEL_EXTRACT)."""
    structured_output: StructuredOutput = "auto"
    """How JSON is requested: json_schema, json_object (schema described in a system message),
    or auto (json_schema until the endpoint rejects it with a 400, then json_object)."""
    temperature: float | None = 0.0
    """Default sampling temperature; None leaves it to the endpoint. Per-call decoding overrides it."""
    json_max_tokens: int | None = 4096
    """Default output cap of `complete_json`; `complete_text` has none unless one is passed."""
    timeout_s: float = Field(120.0, gt=0)
    """Seconds before one HTTP request counts as timed out (and is retried)."""
    max_attempts: int = Field(5, ge=1)
    """HTTP attempts per request, the first included, on 429, 5xx, timeouts and connection errors."""
    backoff_base_s: float = Field(1.0, ge=0)
    """First backoff delay; it doubles per attempt, with jitter, up to `backoff_max_s`."""
    backoff_max_s: float = Field(60.0, ge=0)
    """Largest exponential backoff delay."""
    retry_after_max_s: float = Field(300.0, ge=0)
    """Largest wait honoured from a Retry-After / retry-after-ms header."""
    max_concurrency: int = Field(8, ge=1)
    """Requests in flight at once (per client)."""
    requests_per_minute: float | None = Field(None, gt=0)
    """Request rate limit (token bucket); None = unlimited."""
    tokens_per_minute: float | None = Field(None, gt=0)
    """Token rate limit: estimated before each request, corrected from its usage; None = unlimited."""
    context_tokens: int = Field(128_000, ge=1)
    """The models' context (SAFEFORGE_LLM_CONTEXT_TOKENS): a larger request is refused before it is sent."""
    db_path: Path = Path("outputs/llm/llm.sqlite")
    """SQLite file holding the response cache and the call ledger (SAFEFORGE_LLM_DB)."""
    no_cache: bool = False
    """Skip cache look-ups (fresh responses still replace cached ones) (SAFEFORGE_LLM_NO_CACHE)."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """USD per million tokens for models missing from, or priced differently than, the defaults."""

    def model_for(self, stage: str) -> str:
        """The model a stage uses."""
        return self.stage_models.get(stage, self.model)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> LLMConfig:
        """The LLM part of `Settings.load(env)` (OPENAI_*, SAFEFORGE_MODEL*, SAFEFORGE_LLM_*);
        keyword arguments win."""
        return cls.from_settings(Settings.load(env), **overrides)

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> LLMConfig:
        values: dict[str, Any] = {
            "base_url": settings.openai_base_url,
            "api_key": settings.openai_api_key,
            "model": settings.model,
            "stage_models": settings.stage_models,
            "structured_output": settings.structured_output,
            "db_path": settings.llm_db or settings.outputs / "llm" / "llm.sqlite",
            "no_cache": settings.llm_no_cache,
            "timeout_s": settings.llm_timeout_s,
            "max_attempts": settings.llm_max_attempts,
            "max_concurrency": settings.llm_max_concurrency,
            "requests_per_minute": settings.llm_rpm,
            "tokens_per_minute": settings.llm_tpm,
            "context_tokens": settings.llm_context_tokens,
        }
        values = {key: value for key, value in values.items() if value is not None}
        return cls(**{**values, **overrides})
