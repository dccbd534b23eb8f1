"""The release's table: one row per task, with explicit `datasets` Features, as parquet.

Optional metadata (hand-written tasks have little) becomes empty strings, empty lists, 0 or
null; `metadata_json` keeps the released metadata.json whole, so nothing is lost. `made_by` and
`llm_endpoint` say how each task was made (`_origin`); a task not known to be a model's work shows
its models as the replay server (or as not recorded) and no LLM cost.
"""

from __future__ import annotations

import json
from pathlib import Path

from safeforge.publishing._revalidate import ReleasedTask
from safeforge.task.taxonomy import robot_category_of, setting_category_of

DATA_FILE = "data/train-00000-of-00001.parquet"
FORMALIZATION_FIELDS = (
    "setting",
    "robot_role",
    "robot_task",
    "danger_group",
    "danger_type",
    "danger_mechanism",
    "cause_of_danger",
    "entity_in_danger",
    "result_of_danger",
    "danger_action",
    "instantaneous_avoidability",
    "instantaneous_solution",
)
CATEGORY_FIELDS = {"setting_category": ("setting", setting_category_of), "robot_category": ("robot_role", robot_category_of)}
"""The closed categories the extractor answers, read from the free text where a task has none."""


def features():
    """The dataset's schema (datasets.Features)."""
    from datasets import Features, List, Value

    text, texts = Value("string"), List(Value("string"))
    return Features(
        {
            "task_id": text,
            "source": text,
            "record_id": text,
            "collection": text,
            "made_by": text,
            "llm_endpoint": text,
            "origin": text,
            "content_hash": text,
            **{name: text for name in FORMALIZATION_FIELDS},
            **{name: text for name in CATEGORY_FIELDS},
            "assumptions": texts,
            "safety_domain_pddl": text,
            "safety_problem_pddl": text,
            "domain_pddl": text,
            "problem_pddl": text,
            "safe_plan": text,
            "unsafe_plan": text,
            "safe_plan_length": Value("int32"),
            "unsafe_plan_length": Value("int32"),
            "safety_effort": Value("int32"),
            "danger_conditions": texts,
            "review": {
                "decision": text,
                "final_rule": text,
                "annotators": Value("int32"),
                "accept_votes": Value("int32"),
                "reject_votes": Value("int32"),
                "reasons": texts,
                "disagreements": List({"kind": text, "field": text, "summary": text, "resolution": text}),
            },
            "provenance": {
                "models": texts,
                "prompt_hashes": texts,
                "rounds": Value("int32"),
                "attempts": Value("int32"),
                "tokens": Value("int64"),
                "cost_usd": Value("float64"),
                "source_text": text,
            },
            "metadata_json": text,
        }
    )


def _category(formalization: dict, name: str) -> str:
    text, categorise = CATEGORY_FIELDS[name]
    if formalization.get(name):
        return _text(formalization[name])
    return categorise(formalization[text]) if formalization.get(text) else ""


def _text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _texts(value) -> list[str]:
    """A list of strings from a string, list or {key: value} mapping ("key: value")."""
    if value is None or value == "":
        return []
    if isinstance(value, dict):
        return [f"{k}: {_text(v)}" for k, v in sorted(value.items()) if v is not None]
    if isinstance(value, (list, tuple)):
        return [_text(v) for v in value]
    return [_text(value)]


def _integer(value) -> int | None:
    """An int, or the number of entries of a list (rounds are recorded one dict per round)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, list):
        return len(value)
    return None


def _tokens(value) -> int | None:
    """Tokens in + out, from an int or the {"in", "out", "cached"} mapping generation writes
    (cached tokens are part of "in")."""
    if isinstance(value, dict):
        parts = [p for p in (value.get(k) for k in ("in", "out")) if isinstance(p, int) and not isinstance(p, bool)]
        return sum(parts) if parts else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _review(review) -> dict:
    review = review if isinstance(review, dict) else {}
    annotations = [a for a in review.get("annotations") or [] if isinstance(a, dict)]
    reasons = sorted({str(r) for a in annotations for r in _texts(a.get("reasons"))})
    return {
        "decision": _text(review.get("decision")),
        "final_rule": _text(review.get("final_rule")),
        "annotators": len({a.get("annotator") for a in annotations}),
        "accept_votes": sum(a.get("decision") == "accept" for a in annotations),
        "reject_votes": sum(a.get("decision") == "reject" for a in annotations),
        "reasons": reasons,
        "disagreements": [
            {key: _text(d.get(key)) for key in ("kind", "field", "summary", "resolution")}
            for d in review.get("disagreements") or []
            if isinstance(d, dict)
        ],
    }


def _provenance(provenance: dict, real_cost: bool) -> dict:
    cost = provenance.get("cost_usd") if real_cost else None
    return {
        "models": _texts(provenance.get("models")),
        "prompt_hashes": _texts(provenance.get("prompt_hashes")),
        "rounds": _integer(provenance.get("rounds")),
        "attempts": _integer(provenance.get("attempts")),
        "tokens": _tokens(provenance.get("tokens")),
        "cost_usd": float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        "source_text": _text(provenance.get("record_text")),
    }


def task_row(released: ReleasedTask) -> dict:
    """The dataset row of one released task (its metadata already as the release shows it)."""
    metadata, accepted = released.task.metadata, released.accepted
    danger = metadata.danger_formalization
    formalization = danger.model_dump() if danger else {}
    provenance = metadata.provenance.model_dump()
    return {
        "task_id": accepted.task_id,
        "source": accepted.source,
        "record_id": accepted.record_id,
        "collection": accepted.collection,
        "made_by": accepted.origin.made_by,
        "llm_endpoint": accepted.origin.llm_endpoint,
        "origin": accepted.origin_text,
        "content_hash": released.content_hash,
        **{name: _text(formalization.get(name)) for name in FORMALIZATION_FIELDS},
        **{name: _category(formalization, name) for name in CATEGORY_FIELDS},
        "assumptions": danger.assumption_lines() if danger else [],
        "safety_domain_pddl": released.task.safety_domain,
        "safety_problem_pddl": released.task.safety_problem,
        "domain_pddl": released.basic_domain,
        "problem_pddl": released.basic_problem,
        "safe_plan": released.safe_plan,
        "unsafe_plan": released.unsafe_plan,
        "safe_plan_length": released.safe_length,
        "unsafe_plan_length": released.unsafe_length,
        "safety_effort": released.safety_effort,
        "danger_conditions": released.danger_conditions,
        "review": _review(metadata.review.model_dump(mode="json") if metadata.review else None),
        "provenance": _provenance(provenance, real_cost=not accepted.origin.not_real),
        "metadata_json": json.dumps(json.loads(metadata.to_json()), ensure_ascii=False, sort_keys=True),
    }


def write_parquet(rows: list[dict], folder: Path) -> Path:
    """Write the rows as the release's parquet file; returns its path."""
    import datasets

    path = folder / DATA_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    bars_were_off = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()  # one small file: a progress bar is noise
    try:
        datasets.Dataset.from_list(rows, features=features()).to_parquet(str(path))
    finally:
        if not bars_were_off:
            datasets.enable_progress_bars()
    return path
