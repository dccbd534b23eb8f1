"""`GenerateOptions`: everything a generation run is asked to do, in one place.

`safeforge generate` and the Prefect flow `generate` take exactly these options with these
defaults (the CLI's flags and the flow's parameters are checked against this model by a test), and
both hand them to the one run driver (`safeforge.generation.generate`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from safeforge.common.limits import CHECK_TIME_LIMIT_S
from safeforge.common.ranges import RECORDS, SAMPLE, SECONDS, SEED, Range
from safeforge.generation._settings import GenerationSettings

CONCURRENCY = Range(1, 1024)
WORKERS = Range(1, 256)
MAX_ROUNDS = Range(1, 100)


class GenerateOptions(BaseModel):
    """One generation run: which records, where to, and how."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    source: str = "neiss"
    """The source to read (a name from `safeforge sources list`)."""
    path: str | None = None
    """File or folder to read (default: the source's full data if fetched, else its bundled sample)."""
    out: Path | None = None
    """The runs folder (default: SAFEFORGE_OUTPUTS, else ./outputs)."""
    run_name: str | None = None
    """The run's name (default `<source>-<YYYY-MM-DD>`); an existing run is resumed."""
    limit: int | None = RECORDS.field(None)
    """At most this many records (after sample and offset)."""
    offset: int = RECORDS.field(0)
    """Skip this many records (after sample)."""
    sample: int | None = SAMPLE.field(None)
    """A deterministic sample of this many records (by a keyed hash of seed and record id)."""
    seed: int = SEED.field(0)
    """The seed of `sample`."""
    filters: dict[str, Any] = Field(default_factory=dict)
    """The source's own options, e.g. {"products": [1842], "min_age": 65} for neiss."""
    model: str | None = None
    """The model of every stage (default: SAFEFORGE_MODEL)."""
    concurrency: int = CONCURRENCY.field(8)
    """Records in progress at once (and LLM requests in flight, unless SAFEFORGE_LLM_MAX_CONCURRENCY)."""
    workers: int = WORKERS.field(1)
    """Processes that share the records (each with its share of the concurrency and LLM rate limits):
    above about 32 records at once one process is CPU-bound; 2 or more use more CPUs."""
    max_rounds: int = MAX_ROUNDS.field(5)
    """Generation rounds per record, the first included."""
    judge: bool = True
    """Ask the quality judge about every task that passes the checks."""
    spoc: bool = True
    """Generate a task in an AI2-THOR scene, checked to export to SPOC, where a record's danger can live in one."""
    review_formalizations: bool | None = None
    """Hold each extracted formalization for review in Label Studio before code generation (None:
    SAFEFORGE_REVIEW_FORMALIZATIONS, else off)."""
    engine: str | None = None
    """The planner of both reference plans (default: chosen per task)."""
    time_limit: float = SECONDS.field(CHECK_TIME_LIMIT_S)
    """Seconds for each candidate's whole check: reading, grounding, deriving, planning (planners under a hard limit)."""
    no_cache: bool = False
    """Ask the LLM again even for cached requests (fresh answers replace cached ones)."""
    retry_errors: bool = False
    """Records of a resumed run that ended in error start again."""
    accept_changes: bool = False
    """Resume a run even if its settings, models or prompts differ from its run.json (which then records the changes)."""

    def run_folder(self, outputs: Path) -> Path:
        """`<out or outputs>/<run name>`."""
        return (self.out or outputs) / (self.run_name or default_run_name(self.source))

    def generation_settings(self, base: GenerationSettings | None = None) -> GenerationSettings:
        """The stage settings these options ask for (other fields from `base`)."""
        return (base or GenerationSettings()).model_copy(
            update={
                "max_rounds": self.max_rounds,
                "judge_enabled": self.judge,
                "spoc_targeting": self.spoc,
                "engine": self.engine,
                "planner_time_limit": self.time_limit,
                **({} if self.review_formalizations is None else {"review_formalizations": self.review_formalizations}),
            }
        )


def default_run_name(source: str, today: dt.date | None = None) -> str:
    """`<source>-<YYYY-MM-DD>`: running the same source again the same day resumes the run."""
    return f"{source}-{(today or dt.date.today()).isoformat()}"
