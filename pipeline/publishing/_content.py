"""Content hashes of tasks, and removing duplicates by them.

The hash is sha256 over the normalised safety-augmented PDDL: each file is read as
s-expressions (comments dropped), written back on one line with single spaces, lower-cased
(PDDL is case-insensitive), and the domain and problem are joined by a newline. Two tasks that
differ only in comments, layout or letter case have the same hash.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from safeforge.pddl import sexpr
from safeforge.publishing._collect import AcceptedTask
from safeforge.publishing._errors import PublishError
from safeforge.task.folder import SAFETY_DOMAIN, SAFETY_PROBLEM


def normalise_pddl(text: str) -> str:
    return " ".join(sexpr.to_text(e) for e in sexpr.parse(text)).lower()


def content_hash(domain_text: str, problem_text: str) -> str:
    normalised = normalise_pddl(domain_text) + "\n" + normalise_pddl(problem_text)
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def folder_hash(folder: Path) -> str:
    """The content hash of a task folder; PublishError naming the file it cannot read."""
    texts = []
    for name in (SAFETY_DOMAIN, SAFETY_PROBLEM):
        path = folder / name
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise PublishError(f"{path}: cannot be read: {exc}") from None
    try:
        return content_hash(*texts)
    except ValueError as exc:
        raise PublishError(f"{folder}: {exc}") from None


@dataclass(frozen=True)
class Duplicate:
    """A task left out because an earlier one (in release order) has the same content."""

    task: AcceptedTask
    kept: AcceptedTask
    content_hash: str


def deduplicate(tasks: list[AcceptedTask]) -> tuple[list[tuple[AcceptedTask, str]], list[Duplicate]]:
    """Keep the first task of each content hash, in the given order. Two tasks with the same
    task_id but different content cannot both be released: PublishError names them."""
    kept: list[tuple[AcceptedTask, str]] = []
    by_hash: dict[str, AcceptedTask] = {}
    by_id: dict[str, tuple[AcceptedTask, str]] = {}
    dropped = []
    for task in tasks:
        digest = folder_hash(task.folder)
        if digest in by_hash:
            dropped.append(Duplicate(task, by_hash[digest], digest))
            continue
        if task.task_id in by_id:
            other = by_id[task.task_id][0]
            raise PublishError(
                f"task {task.task_id}: {other.collection} and {task.collection} hold different tasks under this id; rename one of them"
            )
        by_hash[digest] = task
        by_id[task.task_id] = (task, digest)
        kept.append((task, digest))
    return kept, dropped
