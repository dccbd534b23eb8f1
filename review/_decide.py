"""The decision rule: from a task's annotations, its decision or what it waits for, and the
disagreements among its reviewers.

Only an annotation with an accept/reject choice counts (skipped ones are left out before this).
1. **Adjudication.** The "I adjudicate" box decides only when its author is a named adjudicator of
   the run who did not vote on the task; the latest such annotation decides, whatever the votes
   (rule `adjudicated`), and its correction boxes are the only ones applied. Any other adjudication is
   ignored and recorded as a disagreement; from someone who has not voted on the task it counts as
   their vote, from a voter it changes nothing.
2. **Votes.** Each annotator's latest annotation is their vote. A task waits for votes until as many
   annotators as it needs (Label Studio's overlap for the task) have voted.
3. **Split votes or conflicting corrections** (two annotators changing one field to different texts):
   with adjudicators named, the task waits for one of them (the adjudication queue); with none
   named, a reject stands (`reject_stands`) and the later correction stands.
4. Otherwise the votes agree: accepted or rejected (`unanimous`, or `single` with one vote).
A vote an earlier pull recorded that was deleted or changed author since (`vanished`) sends the task
to the adjudication queue whatever the other votes say: only an adjudication decides it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from safeforge.review._annotations import ReviewAnnotation
from safeforge.review._task_data import CORRECTABLE_FIELDS
from safeforge.task.metadata import DisagreementKind, VanishedVote


@dataclass(frozen=True)
class ReviewRules:
    """What a task's decision needs."""

    required: int = 1
    """Votes the task needs (Label Studio's overlap for it)."""
    adjudicators: frozenset[str] = frozenset()
    """E-mails of the run's named adjudicators, in lower case."""


@dataclass(frozen=True)
class Decision:
    decision: Literal["accepted", "rejected"]
    rule: str
    """"single", "unanimous", "reject_stands" or "adjudicated"."""
    reasons: list[str]
    notes: list[str]
    explanation: str


@dataclass(frozen=True)
class Found:
    """A disagreement that holds now (see `safeforge.task.metadata.Disagreement` for the kinds)."""

    kind: DisagreementKind
    key: str
    summary: str
    annotators: tuple[str, ...]
    annotation_ids: tuple[int, ...]
    field: str | None = None


@dataclass
class Outcome:
    """What the annotations of one task amount to."""

    decision: Decision | None
    waiting_for: Literal["votes", "adjudication"] | None
    votes: dict[str, str]
    """Annotator -> their vote (accept or reject)."""
    required: int
    applied: list[ReviewAnnotation]
    """The annotations whose corrections apply, in order (an adjudication alone, or every vote)."""
    adjudication: ReviewAnnotation | None = None
    ignored: dict[int, str] = field(default_factory=dict)
    """Annotation id -> why its adjudication was ignored."""
    disagreements: list[Found] = field(default_factory=list)

    @property
    def progress(self) -> str:
        return f"{len(self.votes)} of {self.required}"

    @property
    def explanation(self) -> str:
        if self.decision is not None:
            return self.decision.explanation
        if self.waiting_for == "votes":
            return f"waiting for votes: {self.progress}"
        return "waiting for an adjudicator: " + "; ".join(d.summary for d in self.disagreements if d.kind in BLOCKING)


BLOCKING = ("votes", "corrections", "vanished_vote")  # these wait for an adjudicator (votes, corrections: when one is named)


def decide(
    annotations: list[ReviewAnnotation], rules: ReviewRules, original: dict[str, str], vanished: Sequence[VanishedVote] = ()
) -> Outcome:
    """The rule of the module docstring; `original` holds the formalization fields' texts before any
    correction (to tell changed fields from unchanged ones)."""
    counted = sorted((a for a in annotations if a.counts), key=lambda a: a.order)
    voters = {a.annotator for a in counted if not a.adjudicating}
    ignored: dict[int, str] = {}
    valid: list[ReviewAnnotation] = []
    for annotation in (a for a in counted if a.adjudicating):
        why = _not_allowed(annotation, rules, voters)
        if why:
            ignored[annotation.id] = why
        else:
            valid.append(annotation)
    votes_cast = [a for a in counted if not a.adjudicating or (a.id in ignored and a.annotator not in voters)]
    votes = {a.annotator: str(a.decision) for a in votes_cast}  # in order: the latest one stays
    found = _disagreements(counted, votes_cast, votes, ignored, original) + [_vanished(vote) for vote in vanished]
    outcome = Outcome(None, None, votes, rules.required, votes_cast, ignored=ignored, disagreements=found)
    if valid:
        outcome.adjudication = final = valid[-1]
        outcome.applied = [final]
        accepted = final.decision == "accept"
        outcome.decision = Decision(
            "accepted" if accepted else "rejected",
            "adjudicated",
            [] if accepted else final.reasons,
            [final.note] if final.note else [],
            f"adjudicated by {final.annotator}",
        )
    elif vanished:
        outcome.waiting_for = "adjudication"
    elif len(votes) < rules.required or not votes:
        outcome.waiting_for = "votes"
    elif rules.adjudicators and any(d.kind in BLOCKING for d in found):
        outcome.waiting_for = "adjudication"
    else:
        outcome.decision = _from_votes(votes_cast, votes)
    return outcome


def _not_allowed(annotation: ReviewAnnotation, rules: ReviewRules, voters: set[str]) -> str:
    """Why this adjudication decides nothing ("" when it decides); without names."""
    if not rules.adjudicators:
        return "no adjudicator is named for this run"
    if annotation.annotator.lower() not in rules.adjudicators:
        return "its author is not a named adjudicator"
    if annotation.annotator in voters:
        return "its author voted on this task"
    return ""


def _vanished(vote: VanishedVote) -> Found:
    kind = vote.decision or "recorded"
    what = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} vote (annotation {vote.annotation_id})"
    who: tuple[str, ...] = (vote.annotator,)
    if vote.what == "deleted":
        summary = f"{what} was deleted from Label Studio"
    else:
        summary, who = f"{what} now counts as another user's", (vote.annotator, str(vote.now_annotator))
    return Found("vanished_vote", f"vanished_vote:{vote.annotation_id}", summary, who, (vote.annotation_id,))


def _from_votes(votes_cast: list[ReviewAnnotation], votes: dict[str, str]) -> Decision:
    latest = {a.annotator: a for a in votes_cast}  # each voter's latest annotation
    rejects = [a for a in latest.values() if a.decision == "reject"]
    single = len(latest) == 1
    if rejects:
        reasons = list(dict.fromkeys(r for a in rejects for r in a.reasons))
        explanation = (
            f"rejected by {rejects[0].annotator}"
            if single
            else f"{len(rejects)} of {len(latest)} annotators rejected; a reject stands when no adjudicator is named"
            if len(rejects) < len(latest)
            else f"all {len(latest)} annotators rejected"
        )
        rule = "single" if single else ("unanimous" if len(rejects) == len(latest) else "reject_stands")
        return Decision("rejected", rule, reasons, [a.note for a in rejects if a.note], explanation)
    explanation = f"accepted by {next(iter(latest))}" if single else f"all {len(latest)} annotators accepted"
    return Decision("accepted", "single" if single else "unanimous", [], [a.note for a in latest.values() if a.note], explanation)


def changed_fields(annotation: ReviewAnnotation, original: dict[str, str]) -> dict[str, str]:
    """The formalization fields this annotation changes: field -> its new text (an empty box or one
    equal to the original, whitespace aside, changes nothing)."""
    changed = {}
    for name, text in annotation.fields.items():
        if normalized(text) and normalized(text) != normalized(original.get(name, "")):
            changed[name] = field_value(name, text)
    return changed


def _disagreements(
    counted: list[ReviewAnnotation],
    votes_cast: list[ReviewAnnotation],
    votes: dict[str, str],
    ignored: dict[int, str],
    original: dict[str, str],
) -> list[Found]:
    found = []
    accepts, rejects = (sorted(who for who, vote in votes.items() if vote == choice) for choice in ("accept", "reject"))
    if accepts and rejects:
        latest = {a.annotator: a.id for a in votes_cast}
        found.append(
            Found(
                "votes",
                "votes",
                f"votes split: {len(accepts)} accept, {len(rejects)} reject",
                tuple(accepts + rejects),
                tuple(latest[who] for who in accepts + rejects),
            )
        )
    changes = {a.annotator: (a.id, changed_fields(a, original)) for a in votes_cast}  # each voter's latest
    for name in CORRECTABLE_FIELDS:
        texts = {who: (id_, normalized(fields[name])) for who, (id_, fields) in changes.items() if name in fields}
        if len({text for _, text in texts.values()}) > 1:
            who = tuple(sorted(texts))
            summary = f"{name} corrected differently by {len(who)} annotators"
            found.append(Found("corrections", f"corrections:{name}", summary, who, tuple(texts[w][0] for w in who), name))
    for annotation in counted:
        if annotation.edited_by_other:
            found.append(
                Found(
                    "edited_vote",
                    f"edited_vote:{annotation.id}",
                    f"annotation {annotation.id} was changed by another user; it counts as the editor's vote",
                    (annotation.author, annotation.annotator),
                    (annotation.id,),
                )
            )
        if annotation.id in ignored:
            found.append(
                Found(
                    "ignored_adjudication",
                    f"ignored_adjudication:{annotation.id}",
                    f"adjudication in annotation {annotation.id} ignored: {ignored[annotation.id]}",
                    (annotation.annotator,),
                    (annotation.id,),
                )
            )
    return found


def normalized(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.strip().splitlines() if line.strip())


def field_value(name: str, text: str) -> str:
    if name == "assumptions":  # one assumption a line, as DESPITE writes them
        return "\n".join(line.strip() for line in text.splitlines() if line.strip())
    return text.strip()
