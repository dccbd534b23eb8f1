"""What a release may say about people: annotators appear under stable pseudonyms, never by the
e-mail address (or name) Label Studio knows them by."""

from __future__ import annotations

import hashlib

from safeforge.task.metadata import Review, TaskMetadata


def pseudonym(annotator: str, salt: str) -> str:
    """`annotator-<8 hex>`: the same person gets the same pseudonym in every release with this salt
    (the Hub repository), and the address cannot be read back from it."""
    digest = hashlib.sha256(f"{salt}\n{annotator.strip().lower()}".encode()).hexdigest()
    return f"annotator-{digest[:8]}"


def public_metadata(metadata: TaskMetadata, salt: str) -> TaskMetadata:
    """`metadata` with every annotator named by pseudonym (annotations, corrections, and the
    decision's explanation, e.g. "accepted by <address>")."""
    if metadata.review is None:
        return metadata
    review = metadata.review.model_dump(mode="json")
    names: dict[str, str] = {}
    for entry in (*review.get("annotations", []), *review.get("corrections", [])):
        if isinstance(entry.get("annotator"), str):
            names[entry["annotator"]] = entry["annotator"] = pseudonym(entry["annotator"], salt)
    for name, alias in sorted(names.items(), key=lambda item: -len(item[0])):
        review["explanation"] = str(review.get("explanation", "")).replace(name, alias)
    return metadata.model_copy(update={"review": Review.model_validate(review)})
