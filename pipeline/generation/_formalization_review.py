"""The formalization review, as DESPITE has it: people review each extracted formalization before
code generation (the run's `review_formalizations` setting).

With it on, a record whose danger was extracted does not go to code generation: it waits in state
`awaiting_formalization_review`, with what a reviewer needs in `<run>/work/<record_id>/formalization.json`
(the record's text and the extraction). `safeforge.review` shows it in Label Studio and brings the
verdict back through `record_formalization_verdict`: accepted, the record returns to `extracted`
with the formalization as corrected by the reviewers (the ledger's detail of that transition, which
`load_extraction` reads), and the run's next resume generates its task; rejected, it ends in
`rejected_by_formalization_review` with the reviewers' reasons. Either way the verdict is kept in
`<run>/work/<record_id>/formalization_review.json` (and an accepted one in the task's provenance);
while the record waits, that file holds the votes so far.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from safeforge.common.files import json_text, write_atomically
from safeforge.generation._extract import Extraction
from safeforge.generation._schemas import ExtractionResult
from safeforge.runs.ledger import RecordState, RunStore, Transition
from safeforge.sources import Record

AWAITING = "awaiting_formalization_review"
REJECTED = "rejected_by_formalization_review"
FORMALIZATION_FILE = "formalization.json"
VERDICT_FILE = "formalization_review.json"
VERDICT_KEY = "formalization_review"
"""Where the verdict sits in the detail of the transition back to `extracted`."""
_PUBLIC = ("decision", "final_rule", "votes", "reasons", "label_studio", "pulled_at")
"""What of a verdict a task's provenance keeps (besides the corrections' fields and texts)."""


@dataclass(frozen=True)
class WaitingFormalization:
    """A record waiting for the review of its formalization: what a reviewer is shown."""

    record_id: str
    source: str
    origin: str
    record_text: str
    extraction: Extraction

    def formalization(self) -> dict[str, Any]:
        """The extracted formalization as JSON values (assumptions a list)."""
        found = self.extraction.result.danger_formalization
        assert found is not None  # a record waits only with a danger extracted
        return found.model_dump(mode="json")


@dataclass(frozen=True)
class FormalizationVerdict:
    """The review's decision on one formalization."""

    accepted: bool
    reason: str
    """One line for the ledger: who decided, and for a rejection the reasons and notes."""
    corrections: dict[str, str] = field(default_factory=dict)
    """field -> its corrected text (assumptions one per line), applied when accepted."""
    detail: dict[str, Any] = field(default_factory=dict)
    """The whole review (rule, votes, annotations, corrections with provenance), kept with the record."""


def _work(store: RunStore, record_id: str) -> Path:
    return store.root / "work" / record_id


def hold_for_review(store: RunStore, state: RecordState, record: Record, extraction: Extraction) -> str:
    """Save what the reviewers are shown and move the record to `awaiting_formalization_review`."""
    folder = _work(store, record.record_id)
    folder.mkdir(parents=True, exist_ok=True)
    shown = {
        "record_id": record.record_id,
        "source": record.source,
        "origin": record.origin,
        "record_text": record.text,
        "extraction": extraction.to_dict(),
    }
    write_atomically(folder / FORMALIZATION_FILE, json_text(shown) + "\n")
    state.move(AWAITING, f"waiting for the formalization review: safeforge review push {store.name} --formalizations")
    return AWAITING


def _acceptance(state: RecordState) -> Transition | None:
    """The latest transition by which the formalization review accepted the record (None: it did not)."""
    return state.latest("extracted", from_state=AWAITING)


def reviewed(state: RecordState) -> bool:
    """Whether the formalization review accepted the record."""
    return _acceptance(state) is not None


def accepted_extraction(state: RecordState) -> dict[str, Any] | None:
    """The extraction the formalization review accepted (corrections applied), as the ledger holds it
    (a record retried after an error goes on from it rather than from a new extraction)."""
    found = _acceptance(state)
    return found.detail if found else None


def formalization_verdict(state: RecordState) -> dict[str, Any] | None:
    """The formalization review that accepted the record, as its task's provenance keeps it (None:
    it was not reviewed)."""
    found = _acceptance(state)
    return public_verdict(found.detail[VERDICT_KEY]) if found and found.detail and VERDICT_KEY in found.detail else None


def public_verdict(detail: dict[str, Any]) -> dict[str, Any]:
    """The part of a verdict a task's provenance keeps: no person named (releases publish provenance)."""
    kept: dict[str, Any] = {key: detail[key] for key in _PUBLIC if key in detail}
    kept["corrections"] = [{key: c.get(key) for key in ("field", "old", "new")} for c in detail.get("corrections", [])]
    return kept


def waiting_formalizations(store: RunStore) -> tuple[list[WaitingFormalization], dict[str, str]]:
    """The run's records waiting for the formalization review, and record_id -> why one cannot be
    shown (its formalization.json is missing or broken)."""
    found: list[WaitingFormalization] = []
    problems: dict[str, str] = {}
    for row in store.ledger.records(state=AWAITING):
        path = _work(store, row.record_id) / FORMALIZATION_FILE
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            extraction = Extraction.from_dict(saved["extraction"])
            if extraction.result.danger_formalization is None:
                raise ValueError("the extraction holds no formalization")
            found.append(WaitingFormalization(row.record_id, row.source, row.origin, str(saved.get("record_text", "")), extraction))
        except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
            problems[row.record_id] = f"{path}: cannot be read: {' '.join(str(exc).split())[:300]}"
    return found, problems


def corrected(extraction: Extraction, corrections: dict[str, str]) -> Extraction:
    """The extraction with the reviewers' corrections applied, validated as the extractor's answers
    are; ValueError naming the field when a correction breaks a rule of the formalization."""
    result = extraction.result.model_dump(mode="json")
    for name, text in corrections.items():
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        result["danger_formalization"][name] = lines if name == "assumptions" else text.strip()
    try:
        validated = ExtractionResult.model_validate(result)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'][1:])) or 'formalization'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"the corrected formalization breaks its rules ({problems})") from None
    return Extraction(validated, extraction.call)


def formalization_review(store: RunStore, record_id: str) -> dict[str, Any] | None:
    """The record's formalization review as the last pull kept it: the verdict, or while the record
    waits, the votes so far ("decision" None); None when nobody voted, or the file cannot be read."""
    try:
        found = json.loads((_work(store, record_id) / VERDICT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def keep_formalization_review(store: RunStore, record_id: str, detail: dict[str, Any]) -> None:
    """Keep the review of a record that still waits (its votes, disagreements), for `review status`."""
    write_atomically(_work(store, record_id) / VERDICT_FILE, json_text(detail) + "\n")


def record_formalization_verdict(store: RunStore, waiting: WaitingFormalization, verdict: FormalizationVerdict) -> str:
    """Record the review's verdict: accepted -> `extracted` with the corrected formalization (code
    generation follows on the run's next resume), rejected -> `rejected_by_formalization_review`.
    Returns the new state; ValueError (nothing written) when a correction breaks the formalization."""
    rid = waiting.record_id
    extraction = corrected(waiting.extraction, verdict.corrections) if verdict.accepted else waiting.extraction
    keep_formalization_review(store, rid, verdict.detail)
    if verdict.accepted:
        store.ledger.transition(rid, "extracted", verdict.reason, detail={**extraction.to_dict(), VERDICT_KEY: verdict.detail})
        return "extracted"
    store.ledger.transition(rid, REJECTED, verdict.reason, detail={VERDICT_KEY: verdict.detail})
    return REJECTED
