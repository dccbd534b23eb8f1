"""`ReviewAnnotation`: one submitted Label Studio annotation as review reads it (labeling_config.xml).

A vote is whoever last saved it: when a user other than the author changes an annotation (Label
Studio's `updated_by`), it counts as the editor's and says so. An annotation that `review push
--remove-duplicates` moved from a duplicate copy of a task (created with the author as
`completed_by` and the original's id as `import_id`) stays its author's until someone edits it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from safeforge.review._task_data import CORRECTABLE_FIELDS, REJECTION_REASONS

_MOVE_SLACK_S = 2.0  # a moved annotation not edited since: updated within this of its creation


@dataclass
class ReviewAnnotation:
    """One reviewer's submitted annotation of a task."""

    id: int
    annotator: str
    """Whose vote it is: the last user who saved it."""
    decision: str | None
    """accept, reject, or None when no choice was made (the annotation does not count)."""
    reasons: list[str]
    note: str
    adjudicating: bool
    """The "I adjudicate" box was ticked (whether it decides depends on who ticked it)."""
    fields: dict[str, str]
    """Text of the correction boxes, by formalization field (as submitted; empty: unchanged)."""
    created_at: str
    lead_time: float | None
    updated_at: str = ""
    author: str = ""
    """Who created it (Label Studio's completed_by); differs from `annotator` when another user edited it."""
    import_id: int | None = None
    """For an annotation `--remove-duplicates` moved: the id of the one it replaces."""

    @classmethod
    def from_label_studio(cls, raw: dict, users: dict[int, str], reasons: Mapping[str, str] = REJECTION_REASONS) -> ReviewAnnotation:
        """Read one annotation; `reasons` are the interface's reasons to reject (alias -> label)."""
        # a reason as stored in a result (its alias), or its label should a result hold that instead
        codes = {**{label: code for code, label in reasons.items()}, **{c: c for c in reasons}}
        values: dict[str, list] = {}
        for item in raw.get("result") or []:
            value = item.get("value") or {}
            values[item.get("from_name", "")] = value.get("choices") or value.get("text") or []
        creator_id = _user_id(raw.get("completed_by"))
        updater_id = _user_id(raw.get("updated_by"))
        created_at = str(raw.get("created_at") or "")
        updated_at = str(raw.get("updated_at") or created_at)
        if raw.get("import_id") is not None and _seconds_between(created_at, updated_at) <= _MOVE_SLACK_S:
            updater_id = creator_id  # moved from a duplicate copy by an admin, not edited since
        voter_id = updater_id if updater_id is not None else creator_id

        def name(uid: int | None) -> str:
            return users.get(uid, f"user {uid}") if uid is not None else "unknown user"

        decision = next((c.lower() for c in values.get("decision", []) if c.lower() in ("accept", "reject")), None)
        return cls(
            id=int(raw["id"]),
            annotator=name(voter_id),
            decision=decision,
            reasons=[codes[r] for r in values.get("reasons", []) if r in codes],
            note="\n".join(str(t) for t in values.get("note", [])).strip(),
            adjudicating=bool(values.get("adjudication")),
            fields={field: "\n".join(str(t) for t in values[f"fix_{field}"]) for field in CORRECTABLE_FIELDS if f"fix_{field}" in values},
            created_at=created_at,
            lead_time=raw.get("lead_time"),
            updated_at=updated_at,
            author=name(creator_id),
            import_id=raw.get("import_id") if isinstance(raw.get("import_id"), int) else None,
        )

    @property
    def counts(self) -> bool:
        return self.decision is not None

    @property
    def edited_by_other(self) -> bool:
        return bool(self.author) and self.author != self.annotator

    @property
    def order(self) -> tuple[str, int]:
        return (self.created_at, self.id)


def _user_id(value) -> int | None:
    user_id = value.get("id") if isinstance(value, dict) else value
    return user_id if isinstance(user_id, int) else None


def _seconds_between(first: str, second: str) -> float:
    try:
        return abs(
            (datetime.fromisoformat(second.replace("Z", "+00:00")) - datetime.fromisoformat(first.replace("Z", "+00:00"))).total_seconds()
        )
    except ValueError:
        return float("inf")
