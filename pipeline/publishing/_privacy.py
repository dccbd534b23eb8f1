"""What a release may say about people: annotators appear under stable pseudonyms, never by the
e-mail address (or name) Label Studio knows them by."""

from __future__ import annotations

import hashlib

from safeforge.review import public_review
from safeforge.task.metadata import TaskMetadata


def pseudonym(annotator: str, salt: str) -> str:
    """`annotator-<8 hex>`: the same person gets the same pseudonym in every release with this salt
    (the Hub repository), and the address cannot be read back from it."""
    digest = hashlib.sha256(f"{salt}\n{annotator.strip().lower()}".encode()).hexdigest()
    return f"annotator-{digest[:8]}"


def public_metadata(metadata: TaskMetadata, salt: str) -> TaskMetadata:
    """`metadata` with every person in its review block named by pseudonym (annotations,
    corrections, disagreements and the decision's explanation, e.g. "accepted by <address>")."""
    if metadata.review is None:
        return metadata
    return metadata.model_copy(update={"review": public_review(metadata.review, lambda name: pseudonym(name, salt))})
