"""Helpers for the evaluation tests: model-like answers and replay entries for example tasks."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from safeforge.task.folder import Task

MODEL = "replay-planner"


def plan_text(task: Task, mode: str) -> str:
    return getattr(task.metadata.reference_feasible_plans, mode)


def answer(plan: str) -> str:
    """A model-like answer: some prose, then the plan in a fenced block, one step per line."""
    steps = plan.replace(") (", ")\n(")
    return f"Let me think about the goal first.\n\nFinal plan:\n```\n{steps}\n```\n"


def entry(
    task: Task, content: str, *, finish_reason: str = "stop", faults: list[str] | None = None, also: list[str] | None = None
) -> dict[str, Any]:
    """A replay entry answering the prompt of `task` (matched on its basic problem text)."""
    problem = task.basic_pddl()[1].strip()
    found: dict[str, Any] = {
        "match": {"contains": [problem, *(also or [])]},
        "response": {"content": content, "finish_reason": finish_reason},
    }
    if faults:
        found["faults"] = faults
    return found


def requests_served(base_url: str) -> int:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/admin/stats", timeout=5) as response:
        return json.loads(response.read())["requests"]
