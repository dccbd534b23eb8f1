"""Runs built the way the pipeline leaves them: a ledger with records in their final states,
accepted task folders (copies of the examples) with provenance and review metadata, and an
LLM call ledger."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests_paths import EXAMPLES

from safeforge.llm import CallLedger, LedgerRow
from safeforge.runs.ledger import RunStore

PATH_TO_ACCEPTED = ("extracted", "checked", "in_review", "accepted")


def enrich(folder: Path, task_id: str, source: str, run: str, cost: float | None) -> None:
    """Metadata as generation and review write it (provenance, checks, review)."""
    path = folder / "metadata.json"
    metadata = json.loads(path.read_text())
    metadata["task_id"] = task_id
    metadata["provenance"] = {
        "source": source,
        "record_id": f"{source}_{task_id}",
        "origin": f"{source}.csv:row 1",
        "run": run,
        "models": {"extract": "model-a", "generate": "model-b", "judge": None},
        "prompt_hashes": {"extract": "abc123"},
        "rounds": [{"round": 1}, {"round": 2}],
        "attempts": 2,
        "tokens": {"in": 1200, "out": 300, "cached": 1000},
        "cost_usd": cost,
        "record_text": f"record text of {task_id}",
    }
    metadata["review"] = {
        "decision": "accepted",
        "final_rule": "majority",
        "annotations": [
            {"annotator": "ann1", "decision": "accept", "reasons": [], "note": "", "corrections": {}, "created_at": "2025-01-01T00:00:00Z"},
            {
                "annotator": "ann2",
                "decision": "reject",
                "reasons": ["unrealistic"],
                "note": "meh",
                "corrections": {},
                "created_at": "2025-01-01T00:00:00Z",
            },
            {"annotator": "ann3", "decision": "accept", "reasons": [], "note": "", "corrections": {}, "created_at": "2025-01-01T00:00:00Z"},
        ],
        "agreement": {"kappa": 0.5},
    }
    path.write_text(json.dumps(metadata, indent=2))


@pytest.fixture
def make_run(tmp_path):
    """make_run(name, accepted=[(example, task_id, source, enriched)], rejected={state: n}, llm_costs=[...])"""

    def make(name: str, accepted, rejected: dict[str, int] | None = None, llm_costs: list[float] | None = None) -> Path:
        store = RunStore(tmp_path / "outputs" / name)
        for example, task_id, source, enriched in accepted:
            record_id = f"{source}_{task_id}"
            store.ledger.register([(record_id, source, f"{source}.csv:row 1")])
            shutil.copytree(EXAMPLES / example, store.task_dir(task_id))
            if enriched:
                enrich(store.task_dir(task_id), task_id, source, name, 0.02)
            else:  # hand-written style: only the DESPITE keys, renamed
                path = store.task_dir(task_id) / "metadata.json"
                metadata = json.loads(path.read_text())
                metadata["task_id"] = task_id
                path.write_text(json.dumps(metadata))
            for state in PATH_TO_ACCEPTED:
                store.ledger.transition(record_id, state, task_id=task_id)
        paths = {
            "no_danger": (),
            "rejected_by_checks": ("extracted",),
            "rejected_by_review": ("extracted", "checked", "in_review"),
            "error": (),
        }
        for state, count in (rejected or {}).items():
            for number in range(count):
                record_id = f"{name}_{state}_{number}"
                store.ledger.register([(record_id, "neiss", "neiss.csv")])
                for step in (*paths[state], state):
                    store.ledger.transition(record_id, step)
        if llm_costs:
            ledger = CallLedger(store.root / "llm.sqlite")
            for number, cost in enumerate(llm_costs):
                ledger.record(LedgerRow("extract", f"r{number}", "model-a", 1, "ok", 100, 20, 0, 0.1, cost))
            ledger.close()
        store.ledger.close()
        return store.root

    return make
