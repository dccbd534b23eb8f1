"""Helpers of the review tests: credentials, annotations as the interface submits them, snapshots."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path

from label_studio_sdk import LabelStudio

from safeforge.review import CORRECTABLE_FIELDS
from safeforge.review._mapping import ReviewMapping
from tests.doubles.annotators import annotator_client, annotator_token

ADMIN, PASSWORD, TOKEN = "admin@review.test", "admin-password-1", "review-tests-admin-token"


_TOKENS: dict[tuple[str, str], str] = {}  # (server, e-mail) -> the annotator's token


def join_as(url: str, admin: LabelStudio, email: str) -> LabelStudio:
    """The SDK client of annotator `email` on the server at `url`: signed up through the
    organization's invite link as people do (once), then with their own token."""
    if (url, email) not in _TOKENS:
        _TOKENS[url, email] = annotator_token(url, admin, email)
    return annotator_client(url, _TOKENS[url, email], email)


def token_of(url: str, email: str) -> str:
    """The API token of an annotator who joined the server at `url` (`join_as`)."""
    return _TOKENS[url, email]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Submission:
    """What an annotator submits in the interface."""

    decision: str
    reasons: tuple[str, ...] = ()
    note: str = ""
    fixes: dict | None = None
    adjudicating: bool = False
    lead_time: float = 42.0


def submit(client: LabelStudio, ls_task_id: int, submission: Submission) -> int:
    """Create the annotation the interface submits (the result shape recorded from a real browser
    session: choices by alias; every correction box, prefilled or edited, as a textarea)."""
    task = client.tasks.get(ls_task_id)
    result = [{"from_name": "decision", "to_name": "plans", "type": "choices", "value": {"choices": [submission.decision]}}]
    if submission.reasons:
        result.append({"from_name": "reasons", "to_name": "plans", "type": "choices", "value": {"choices": list(submission.reasons)}})
    if submission.note:
        result.append({"from_name": "note", "to_name": "plans", "type": "textarea", "value": {"text": [submission.note]}})
    if submission.adjudicating:
        result.append({"from_name": "adjudication", "to_name": "plans", "type": "choices", "value": {"choices": ["adjudicating"]}})
    for name in CORRECTABLE_FIELDS:
        text = (submission.fixes or {}).get(name, task.data[f"current_{name}"])
        result.append({"from_name": f"fix_{name}", "to_name": "task", "type": "textarea", "value": {"text": [text]}})
    return client.annotations.create(ls_task_id, result=result, lead_time=submission.lead_time).id


def ls_task_id(store, task_id: str) -> int:
    return ReviewMapping.load(store).tasks[task_id].ls_task_id


def snapshot(store) -> dict:
    """Everything a failed review step must leave unchanged: ledger rows and history, metadata, mapping."""
    records = store.ledger.records()
    return {
        "records": records,
        "history": {r.record_id: store.ledger.history(r.record_id) for r in records},
        "files": {
            str(p.relative_to(store.root)): p.read_bytes()
            for p in sorted(Path(store.root).rglob("*"))
            if p.is_file() and p.suffix != ".sqlite" and not p.name.startswith("ledger.sqlite")
        },
    }
