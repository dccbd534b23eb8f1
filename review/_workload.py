"""Each annotator's work on a run: tasks voted on, tasks still pending for them, tasks they hold
open in Label Studio now, and how often their vote matched the final decision.

Label Studio community assigns no task to anyone: any member may vote on a task until it has the
votes it needs. So a task is pending for an annotator when it waits for votes and they have not
voted on it; for a named adjudicator (whose vote would keep them from adjudicating the task), a
task in the adjudication queue they did not vote on. The annotators are those who voted on a task of the run, and the adjudicators.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from safeforge.review._agreement import Agreement, TaskVotes


@dataclass(frozen=True)
class AnnotatorWork:
    annotator: str
    done: int
    """Tasks they voted on (an adjudication counts when it is their only annotation of the task)."""
    pending: tuple[str, ...]
    locked: tuple[str, ...] | None
    """Tasks Label Studio holds open for them now (None: not known, the server's database is elsewhere)."""
    decided: int
    agreed_with_final: int
    adjudicator: bool = False
    """A named adjudicator of the run."""

    def to_dict(self) -> dict:
        return {**self.__dict__, "pending": list(self.pending), "locked": None if self.locked is None else list(self.locked)}


def workload(
    votes: Mapping[str, TaskVotes],
    waiting: Iterable[str],
    queue: Iterable[str],
    adjudicators: Iterable[str],
    agreement: Agreement,
    locks: Mapping[str, list[str]] | None = None,
) -> list[AnnotatorWork]:
    """The table of the module docstring: `votes` by task id, the task ids `waiting` for votes and
    in the adjudication `queue`, `locks` (annotator -> task ids), by annotator."""
    voters = {task_id: set(task.votes) for task_id, task in votes.items()}
    records = {a.annotator: a for a in agreement.annotators}
    named = {a.lower() for a in adjudicators}
    people = sorted(set(records) | set(adjudicators) | set(locks or {}))
    waiting, queue = sorted(waiting), sorted(queue)
    rows = []
    for person in people:
        pending = [t for t in (queue if person.lower() in named else waiting) if person not in voters.get(t, set())]
        record = records.get(person)
        rows.append(
            AnnotatorWork(
                person,
                record.votes if record else 0,
                tuple(pending),
                None if locks is None else tuple(sorted(locks.get(person, []))),
                record.decided if record else 0,
                record.agreed_with_final if record else 0,
                person.lower() in named,
            )
        )
    return rows


def _with_final(row: AnnotatorWork) -> str:
    return f"{row.agreed_with_final} of {row.decided}" if row.decided else "n/a"


def _tasks(ids: tuple[str, ...] | None, limit: int = 5) -> str:
    if ids is None:
        return "unknown"
    shown = ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
    return f"{len(ids)}" + (f" ({shown})" if ids else "")


def workload_lines(rows: list[AnnotatorWork]) -> list[str]:
    """The table as text lines."""
    if not rows:
        return []
    return [
        "Annotators: done, pending (waiting for their vote or, for an adjudicator, their adjudication), locked now, "
        "agreed with the final decision",
        *(f"  {r.annotator}: done {r.done}, pending {_tasks(r.pending)}, locked {_tasks(r.locked)}, agreed {_with_final(r)}" for r in rows),
    ]


def workload_markdown(rows: list[AnnotatorWork], alias: Callable[[str], str] = str) -> str:
    """The table in Markdown (annotators named by `alias`), without locks (a moment's state)."""
    if not rows:
        return ""
    lines = ["| annotator | role | done | pending | agreed with final decision |", "|---|---|---|---|---|"]
    lines += [
        f"| {alias(r.annotator)} | {'adjudicator' if r.adjudicator else 'annotator'} | {r.done} | {len(r.pending)} | {_with_final(r)} |"
        for r in rows
    ]
    return "\n".join(lines)
