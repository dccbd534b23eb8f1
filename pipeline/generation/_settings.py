"""GenerationSettings: how the extractor, the generator's rounds and the checks behave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from safeforge.common.limits import CHECK_TIME_LIMIT_S
from safeforge.settings import Settings


class GenerationSettings(BaseModel):
    """Settings of the generation stages (the LLM endpoint and models are in LLMConfig)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    max_rounds: int = Field(default=5, ge=1)
    """Generation rounds per record (the first attempt included); a record whose task still fails
    after this many ends in rejected_by_checks."""
    extract_temperature: float = Field(default_factory=lambda: Settings.load().extract_temperature, ge=0, le=2)
    """Sampling temperature of the danger extractor (default: SAFEFORGE_EXTRACT_TEMPERATURE, else DESPITE's 0)."""
    generate_temperature: float = Field(default_factory=lambda: Settings.load().generate_temperature, ge=0, le=2)
    """Sampling temperature of the code generator (default: SAFEFORGE_GENERATE_TEMPERATURE, else DESPITE's 1)."""
    judge_temperature: float = Field(default_factory=lambda: Settings.load().judge_temperature, ge=0, le=2)
    """Sampling temperature of the quality judge (default: SAFEFORGE_JUDGE_TEMPERATURE, else DESPITE's 0.5)."""
    generate_max_tokens: int = Field(default=8192, ge=256)
    """Output cap of one generator reply (two PDDL files); the other stages use LLMConfig's cap."""
    planner_time_limit: float = Field(default=CHECK_TIME_LIMIT_S, gt=0)
    """Seconds for each candidate's whole check: reading, grounding, deriving and planning (planners under a hard, process-level limit)."""
    engine: str | None = None
    """Planner for both reference plans; None picks Fast Downward, or ENHSP where numbers remain."""
    spoc_targeting: bool = True
    """Ask for a task in an AI2-THOR scene, which must export to SPOC, where a record's danger can
    live in one (see the docs, "Generation for SPOC"); else every task is generated as DESPITE's."""
    review_formalizations: bool = Field(default_factory=lambda: Settings.load().review_formalizations)
    """Hold each extracted formalization in state awaiting_formalization_review for people to review
    before code generation (default: SAFEFORGE_REVIEW_FORMALIZATIONS, else off)."""
    judge_enabled: bool = True
    """Ask the quality judge (a separate LLM query) about every task that passes the checks."""
    keep_rejected: bool = True
    """Keep the last attempt of a rejected record under <run>/rejected/<record_id>/ for inspection."""
    prompts_dir: Path | None = None
    """Directory of the prompt templates; None = $SAFEFORGE_PROMPTS, else the repository's prompts/."""

    @classmethod
    def from_settings(cls, settings: Settings, **values: Any) -> GenerationSettings:
        """The stage settings whose defaults come from `settings` already read (not from the environment again)."""
        defaults = {name: getattr(settings, name) for name in _FROM_SETTINGS}
        return cls(**{**defaults, **values})


_FROM_SETTINGS = ("extract_temperature", "generate_temperature", "judge_temperature", "review_formalizations")
"""The fields whose default is a setting."""
