"""LLMConfig: environment variables, per-stage models, documentation of every field."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import ValidationError

from safeforge.llm import LLMClient, LLMConfig


def test_from_env_reads_endpoint_key_models_and_limits():
    env = {
        "OPENAI_BASE_URL": "https://api.deepseek.com/v1",
        "OPENAI_API_KEY": "sk-from-env",
        "SAFEFORGE_MODEL": "deepseek-chat",
        "SAFEFORGE_MODEL_JUDGE": "deepseek-reasoner",
        "SAFEFORGE_STRUCTURED_OUTPUT": "json_object",
        "SAFEFORGE_LLM_DB": "/tmp/somewhere/llm.sqlite",
        "SAFEFORGE_LLM_MAX_CONCURRENCY": "16",
        "SAFEFORGE_LLM_RPM": "500",
        "SAFEFORGE_LLM_NO_CACHE": "1",
        "SAFEFORGE_MODEL_EMPTY": "",
        "UNRELATED": "x",
    }
    config = LLMConfig.from_env(env, max_attempts=2)
    assert config.base_url == "https://api.deepseek.com/v1"
    assert config.api_key is not None and config.api_key.get_secret_value() == "sk-from-env"
    assert (config.model_for("extract"), config.model_for("judge")) == ("deepseek-chat", "deepseek-reasoner")
    assert config.stage_models == {"judge": "deepseek-reasoner"}
    assert config.structured_output == "json_object"
    assert config.db_path == Path("/tmp/somewhere/llm.sqlite")
    assert (config.max_concurrency, config.requests_per_minute, config.no_cache, config.max_attempts) == (
        16,
        500.0,
        True,
        2,
    )


def test_defaults_without_environment():
    config = LLMConfig.from_env({})
    assert (config.base_url, config.model, config.structured_output, config.api_key) == (
        "https://api.openai.com/v1",
        "gpt-4o-mini",
        "auto",
        None,
    )


def test_invalid_values_are_rejected():
    with pytest.raises(ValidationError, match="structured_output"):
        LLMConfig(structured_output="xml")
    with pytest.raises(ValidationError, match="max_attempts"):
        LLMConfig(max_attempts=0)


def test_every_field_has_a_docstring():
    undocumented = [name for name, field in LLMConfig.model_fields.items() if not (field.description or "").strip()]
    assert undocumented == []


def test_reserved_names_are_not_decoding_parameters(tmp_path, schema, messages):
    async def go():
        async with LLMClient(LLMConfig(db_path=tmp_path / "x.sqlite")) as client:
            client.cache_request("extract", "r1", messages("x"), schema, "t", model="gpt-4o")

    with pytest.raises(TypeError, match="model"):
        asyncio.run(go())
