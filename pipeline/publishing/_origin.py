"""Where a released task comes from, read from its metadata: how it was made, the dataset its record
came from, and where its LLM responses came from.

- made_by: `generated` (Safeforge's generator: provenance names a generator, models or rounds),
  `despite` (imported from DESPITE: provenance source `despite`) or `handwritten` (anything else).
- source: the registered source dataset of the record (`neiss`, `normbank`, ...), or "" when not
  known. An imported DESPITE task's comes from its id, which DESPITE forms as source name + row
  (`normbank_14564`).
- llm_endpoint: for generated tasks `real`, `replay` (Safeforge's replay server: hand-written
  responses, not a model's) or `unknown` (not recorded: treated as not real); `none` for tasks no
  Safeforge LLM call made.
"""

from __future__ import annotations

from dataclasses import dataclass

from safeforge.publishing._citations import DESPITE, HANDWRITTEN
from safeforge.sources.registry import SOURCES, task_source
from safeforge.task.metadata import Provenance, TaskMetadata

GENERATED = "generated"
MADE_BY = (GENERATED, DESPITE, HANDWRITTEN)
REAL, REPLAY, UNKNOWN, NO_LLM = "real", "replay", "unknown", "none"
ENDPOINTS = (REAL, REPLAY, UNKNOWN, NO_LLM)


@dataclass(frozen=True)
class TaskOrigin:
    made_by: str
    source: str
    llm_endpoint: str

    @property
    def datasets(self) -> set[str]:
        """The datasets the task is derived from (their licences and citations apply)."""
        found = {self.source} if self.source else set()
        if self.made_by in (DESPITE, HANDWRITTEN):
            found.add(self.made_by)
        return found

    @property
    def not_real(self) -> bool:
        """Generated, but not known to be a model's work (replayed, or the endpoint unknown)."""
        return self.llm_endpoint in (REPLAY, UNKNOWN)


def _generated(provenance: Provenance) -> bool:
    return bool(provenance.generator or any(provenance.models.values()) or provenance.rounds or provenance.llm_endpoint)


def task_origin(metadata: TaskMetadata, task_id: str, ledger_source: str | None = None) -> TaskOrigin:
    """The origin of a task; `ledger_source` is what a run's ledger says of its record."""
    provenance = metadata.provenance
    if provenance.source == DESPITE or provenance.imported_from:
        source = task_source(task_id)
        return TaskOrigin(DESPITE, source if source in SOURCES else "", NO_LLM)
    declared = ledger_source if ledger_source in SOURCES else provenance.source
    source = declared if declared in SOURCES else ""
    if _generated(provenance):
        return TaskOrigin(GENERATED, source, provenance.llm_endpoint or UNKNOWN)
    return TaskOrigin(HANDWRITTEN, source, NO_LLM)


def shown_model(model: str | None, endpoint: str) -> str | None:
    """How a release names the model of an LLM stage: the replay server where the responses were
    replayed, and a model whose endpoint was not recorded as such."""
    if model is None or endpoint == REAL:
        return model
    if endpoint == REPLAY:
        return f"replay server (hand-written responses filed under {model}; not a model's output)"
    return f"{model} (endpoint not recorded: possibly replayed)"


def marked_metadata(metadata: TaskMetadata, origin: TaskOrigin) -> TaskMetadata:
    """`metadata` of a task not known to be a model's work with each stage's model shown as
    `shown_model` says, and no cost (in the task, its extraction and its rounds: nothing known was paid)."""
    if not origin.not_real:
        return metadata
    provenance = metadata.provenance
    models = {stage: shown_model(model, origin.llm_endpoint) for stage, model in provenance.models.items()}
    unpaid = {
        "models": models,
        "cost_usd": None,
        "extraction": None if provenance.extraction is None else {**provenance.extraction, "cost_usd": None},
        "rounds": [{**r, "cost_usd": None} if "cost_usd" in r else r for r in provenance.rounds],
    }
    return metadata.model_copy(update={"provenance": provenance.model_copy(update=unpaid)})
