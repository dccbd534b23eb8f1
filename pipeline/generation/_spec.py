"""What a generation run records of itself in run.json (`safeforge.runs.spec`): the spec that must
not change when the run is resumed, and what one invocation ran with."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from safeforge.generation._executors import Executor
from safeforge.generation._extract import STAGE as EXTRACT_STAGE
from safeforge.generation._generate import STAGE as GENERATE_STAGE
from safeforge.generation._judge import STAGE as JUDGE_STAGE
from safeforge.generation._options import GenerateOptions
from safeforge.generation._prompts import PromptSet
from safeforge.generation._settings import GenerationSettings
from safeforge.llm import LLMConfig
from safeforge.runs.spec import code_version, dependency_versions

NOT_IN_SPEC = {"prompts_dir", "keep_rejected"}
"""Stage settings that do not change what a run makes (the prompts count by their hashes)."""


def generation_spec(settings: GenerationSettings, config: LLMConfig, prompts: PromptSet) -> dict[str, Any]:
    """The stage settings, LLM decoding defaults, models and prompt hashes of a run. The formalization
    review is in it when on (so that runs made before the setting existed resume as they were)."""
    left_out = NOT_IN_SPEC | (set() if settings.review_formalizations else {"review_formalizations"})
    return {
        "settings": settings.model_dump(mode="json", exclude=left_out),
        "llm": {
            "temperature": config.temperature,
            "json_max_tokens": config.json_max_tokens,
            "structured_output": config.structured_output,
        },
        "models": {stage: config.model_for(stage) for stage in (EXTRACT_STAGE, GENERATE_STAGE, JUDGE_STAGE)},
        "prompts": prompts.hashes(),
    }


def invocation(options: GenerateOptions, executor: Executor, config: LLMConfig) -> dict[str, Any]:
    """What one `generate` call ran with besides the spec."""
    return {
        "options": options.model_dump(mode="json"),
        "executor": executor.describe(),
        "endpoint": _without_credentials(config.base_url),
        "code": code_version(),
        "dependencies": dependency_versions(),
    }


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else ""))) if parts.hostname else url
