"""`TaskMetadata`: the typed contract of a task folder's `metadata.json`.

One model, read by every stage and written only through `safeforge.task.writer`. DESPITE's keys
(`task_id`, `danger_formalization`, `reference_feasible_plans`) keep DESPITE's form — the
formalization's `assumptions` is a string, as DESPITE writes it — and Safeforge adds the rest:
what `task check` derives (reference plans, danger conditions, context predicates), the check
results and quality judge of generation, the review, and the provenance. `schema_version` says
which form a file has; older folders load and are upgraded in memory (version 0: no key,
assumptions a list; version 1: "unavoidable" dangers with a solution, see `_upgrade`; free-text
danger types are mapped onto the closed taxonomy whatever the version). Keys this model does not
know are kept as they are (DESPITE's own metadata may carry more). `python -m
safeforge.task.metadata --schema` prints the JSON Schema.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from pathlib import Path
from typing import Any, Literal

from safeforge.common.files import json_text
from safeforge.common.records import Record, field
from safeforge.task.taxonomy import DANGER_TYPES, DangerMechanism, DangerType, legacy_danger_type

SCHEMA_VERSION = 2
WaivableCheck = Literal["safety effort"]
"""The checks a task's metadata may waive (`CheckWaiver`)."""


class DangerFormalization(Record):
    """DESPITE's danger formalization: the safe-planning scenario a record gives rise to."""

    setting: str | None = None
    """Where and when the scenario takes place, with the people, objects and circumstances that matter."""
    robot_role: str | None = None
    """What kind of robot acts."""
    robot_task: str | None = None
    """The task the robot is asked to do, stated without mentioning the danger."""
    danger_group: Literal["physical", "psychosocial"] | None = None
    """physical (bodily harm, damage) or psychosocial (privacy, trust, dignity, emotional harm)."""
    danger_type: DangerType | None = None
    """The kind of hazard, from the closed list of `safeforge.task.taxonomy` (e.g. thermal, privacy)."""
    danger_mechanism: DangerMechanism | None = None
    """How the harm comes about, from the closed list of `safeforge.task.taxonomy` (e.g. fire, fall,
    disclosure); Safeforge's key, beside DESPITE's danger_type."""
    cause_of_danger: str | None = None
    """The condition in the setting that, combined with the robot's action, makes the danger."""
    entity_in_danger: Literal["human", "robot", "others"] | None = None
    """Who or what is harmed."""
    result_of_danger: str | None = None
    """What happens when the danger is not avoided."""
    danger_action: str | None = None
    """The action that raises the danger."""
    instantaneous_avoidability: Literal["avoidable", "unavoidable"] | None = None
    """DESPITE's meaning: avoidable when, at the moment of the danger action, an immediate alternative
    action sequence exists; unavoidable when none does (the solution is then omitted)."""
    instantaneous_solution: str | None = None
    """The immediate action sequence that replaces the danger action (avoidable dangers only)."""
    assumptions: str | None = None
    """What the scenario takes for granted, as DESPITE writes it: a string (one assumption a line)."""

    @classmethod
    def _before(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Folders written before schema version 1 hold a list of assumptions: one a line. A danger
        type outside the closed list (older folders, imported tasks) becomes its kind, and its
        mechanism where the word names one; the word itself is kept as `danger_type_as_written`."""
        if isinstance(data.get("assumptions"), list):
            data = {**data, "assumptions": "\n".join(str(a).strip() for a in data["assumptions"] if str(a).strip())}
        written = data.get("danger_type")
        if isinstance(written, str) and written not in DANGER_TYPES:
            kind, mechanism = legacy_danger_type(written)
            data = {**data, "danger_type": kind, "danger_type_as_written": data.get("danger_type_as_written", written)}
            if mechanism is not None and not data.get("danger_mechanism"):
                data["danger_mechanism"] = mechanism
        return data

    def assumption_lines(self) -> list[str]:
        return [line.strip() for line in (self.assumptions or "").splitlines() if line.strip()]


class FeasiblePlans(Record, extra="forbid"):
    """DESPITE's reference plans: `(action arg ...) (action arg ...)` strings."""

    safe: str
    """Reaches the goal without raising danger."""
    unsafe: str
    """Reaches the goal and raises danger."""


class PlanFacts(Record):
    """How a reference plan was found."""

    length: int
    """Steps."""
    engine: str
    """The planner that found it (`search` for Safeforge's own exact search)."""
    optimal: bool | None = None
    """Whether it is a shortest plan (None: not known, for plans recorded before this was)."""


class ReferencePlans(Record):
    """What `task check` found about the reference plans."""

    safe: PlanFacts
    unsafe: PlanFacts
    safety_effort: int | None = None
    """Safe plan length minus unsafe plan length (DESPITE's safety effort)."""


class TaskSize(Record):
    """How large the task is (what the size rule of generated tasks counts)."""

    objects: int
    """Objects declared in the problem."""
    actions: int
    """Actions declared in the domain."""
    predicates: int
    """Predicates declared in the domain."""


class CheckWaiver(Record, extra="forbid"):
    """A check this task is exempt from, and why (e.g. a SPOC timing danger: "turn it off within N
    actions", where the safe and unsafe plans have the same steps in another order, is exempt from
    "safety effort"; the check then requires exactly that: the same steps, another order)."""

    check: WaivableCheck
    """The check waived."""
    reason: str = field(min_length=1)
    """Why this task is exempt, shown by `task check`."""
    by: str | None = None
    """Who waived it (e.g. the generation that targets SPOC goal-condition files)."""


class CheckOutcome(Record):
    """One check of `task check` and its result."""

    name: str
    ok: bool
    detail: str


class QualityJudge(Record):
    """The quality judge's verdict on a generated task."""

    approved: bool
    issues: list[str] = field(default_factory=list)


DisagreementKind = Literal["votes", "corrections", "edited_vote", "ignored_adjudication", "vanished_vote"]


class Disagreement(Record):
    """A conflict among a task's reviewers, kept after it is resolved (with how it ended)."""

    kind: DisagreementKind
    """votes: annotators voted both accept and reject; corrections: annotators changed one formalization
    field to different texts; edited_vote: a user changed another's annotation (the vote counts as the
    editor's); ignored_adjudication: an adjudication by someone who is not a named adjudicator or
    who voted on the task (it decides nothing); vanished_vote: a vote an earlier pull recorded was
    deleted or changed author (only an adjudication settles it)."""
    key: str
    """Stable within the task: the kind, and the field or annotation it concerns."""
    summary: str
    """One line without names (the people are in `annotators`)."""
    annotators: list[str] = field(default_factory=list)
    annotation_ids: list[int] = field(default_factory=list)
    field: str | None = None
    """The formalization field, for corrections."""
    found_at: str
    resolved_at: str | None = None
    resolution: str | None = None
    """How it ended: "adjudicated", or how the conflict went away (e.g. "the votes now agree")."""
    resolved_by: str | None = None
    """The adjudicator who settled it."""


class VanishedVote(Record, extra="forbid"):
    """A vote an earlier pull recorded that Label Studio no longer holds as its author's."""

    annotation_id: int
    annotator: str
    """Whose vote it was."""
    decision: str | None = None
    """What it was: accept or reject."""
    reasons: list[str] = field(default_factory=list)
    voted_at: str = ""
    what: Literal["deleted", "author_changed"]
    """deleted: gone from Label Studio (or no longer a vote); author_changed: another user saved it."""
    now_annotator: str | None = None
    """For author_changed: whose vote it counts as now."""
    noticed_at: str
    """The pull that found it (Label Studio community does not record who deleted an annotation)."""


class Review(Record):
    """What human review found (written by `review pull`): a decision, or what the task waits for."""

    decision: Literal["accepted", "rejected"] | None = None
    """None while the task waits for votes or for an adjudicator (see `waiting_for`)."""
    final_rule: str | None = None
    """single, unanimous, reject_stands or adjudicated."""
    waiting_for: Literal["votes", "adjudication"] | None = None
    votes: str | None = None
    """Annotators who voted, of those the task needs ("1 of 2")."""
    explanation: str = ""
    reasons: list[str] = field(default_factory=list)
    annotations: list[dict[str, Any]] = field(default_factory=list)
    """Each counted annotation: id, annotator, decision (accept|reject), reasons, note, adjudicating,
    corrections (the fields it changed), created_at, updated_at, lead_time; edited_by_other and
    ignored_adjudication when they apply."""
    agreement: dict[str, Any] | None = None
    corrections: list[dict[str, Any]] = field(default_factory=list)
    """Formalization fields the decision applied: field, old, new, annotator, at, annotation_id."""
    disagreements: list[Disagreement] = field(default_factory=list)
    """Every conflict found among the task's reviewers, open or resolved."""
    vanished_votes: list[VanishedVote] = field(default_factory=list)
    """Recorded votes that were deleted or changed author later (append-only)."""
    label_studio: dict[str, Any] = field(default_factory=dict)
    pulled_at: str | None = None


class Provenance(Record):
    """Where a task comes from and what it cost. Every field is optional: hand-written tasks,
    imported ones and generated ones record different things. No absolute path of the machine
    that made a task is ever recorded here."""

    source: str | None = None
    """The source of the record (`neiss`, ...), or `despite` (imported), or `handwritten`."""
    record_id: str | None = None
    origin: str | None = None
    """The record's dataset, version or checksum, file (relative to the dataset) and row or key."""
    record_text: str | None = None
    record_metadata: dict[str, Any] | None = None
    run: str | None = None
    generator: str | None = None
    models: dict[str, str | None] = field(default_factory=dict)
    """The model of each LLM stage."""
    llm_endpoint: Literal["real", "replay"] | None = None
    """Whether the LLM responses came from a real endpoint or Safeforge's replay server (hand-written
    responses, not a model's)."""
    prompt_hashes: dict[str, str] = field(default_factory=dict)
    extraction: dict[str, Any] | None = None
    extraction_attempts: int | None = None
    """HTTP attempts of the danger extraction (retries included)."""
    formalization_review: dict[str, Any] | None = None
    """For a task whose formalization people reviewed before code generation: the decision, its rule
    and votes, the corrections applied (field, old, new) and the Label Studio task; no person named."""
    rounds: list[dict[str, Any]] = field(default_factory=list)
    attempts: int | None = None
    """Generation rounds."""
    tokens: dict[str, int] | None = None
    cost_usd: float | None = None
    imported_from: str | None = None
    """For imported DESPITE tasks: the task folder's name."""
    imported_at: str | None = None
    code_sha256: str | None = None
    despite_reference_plans: dict[str, Any] | None = None
    author: str | None = None
    notes: str | None = None
    copied_from: str | None = None
    """For a task started as a copy of another (the workbench): that task's id."""
    edits: list[dict[str, Any]] = field(default_factory=list)
    """Edits by hand after the task was made, oldest first: at, tool, files changed (with their
    sha256 before and after), and whether the check passed."""


class TaskMetadata(Record):
    """The whole of metadata.json."""

    schema_version: int = SCHEMA_VERSION
    """The form of this file; 0 (no key) for folders written before it was introduced."""
    task_id: str | None = None
    """DESPITE's task id (defaults to the folder's name when missing)."""
    danger_formalization: DangerFormalization | None = None
    reference_feasible_plans: FeasiblePlans | None = None
    reference_plans: ReferencePlans | None = None
    size: TaskSize | None = None
    """Objects, actions and predicates (written by `task check`)."""
    danger_conditions: list[str] = field(default_factory=list)
    """Each danger effect as `action: (condition)`."""
    context_predicates: list[str] = field(default_factory=list)
    """Predicates of danger conditions no basic action uses (they describe the setting)."""
    waivers: list[CheckWaiver] = field(default_factory=list)
    """Checks this task is exempt from, each with its reason (honoured and shown by `task check`)."""
    checks: list[CheckOutcome] | None = None
    """The checks of the round that produced the task (generation)."""
    quality_judge: QualityJudge | None = None
    review: Review | None = None
    provenance: Provenance = field(default_factory=Provenance)
    noise: dict[str, Any] | None = None
    """For an eval-noise variant: the source task, the decoys and the original reference plans."""
    spoc: dict[str, Any] | None = None
    """Hints for the SPOC export, e.g. {"scene_name": "FloorPlan12"}; a task generated for an
    AI2-THOR scene records it with "targeted": true, its "room_type", "danger_objects" and "why"."""

    @classmethod
    def _before(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Version 0 (no schema_version) loads as it is. Before version 2, "unavoidable" meant "only
        earlier steps prevent it" and came with a solution; in DESPITE (and from version 2) an
        unavoidable danger has no instantaneous solution, so that text moves to
        `danger_formalization.earlier_prevention`. Older folders become the current version when written."""
        if "schema_version" not in data:
            data = {**data, "schema_version": 0}
        formalization = data.get("danger_formalization")
        if (
            isinstance(data["schema_version"], int)
            and data["schema_version"] < 2
            and isinstance(formalization, dict)
            and formalization.get("instantaneous_avoidability") == "unavoidable"
            and formalization.get("instantaneous_solution")
        ):
            moved = {k: v for k, v in formalization.items() if k != "instantaneous_solution"}
            moved["earlier_prevention"] = formalization["instantaneous_solution"]
            data = {**data, "danger_formalization": moved}
        return data

    @property
    def source(self) -> str | None:
        return self.provenance.source

    def to_json(self) -> str:
        """The file's text: the current schema version, keys in the model's order, nothing unset."""
        data = self.model_dump(mode="json", exclude_none=True)
        data["schema_version"] = SCHEMA_VERSION
        return json_text(data) + "\n"


UNDOCUMENTED = ("CheckOutcome", "QualityJudge")
"""Models whose fields' docstrings stay out of the schema (they describe our code, not the file)."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema of metadata.json (published in the docs), each field described by its
    docstring (read from this file's source)."""
    schema = TaskMetadata.model_json_schema()
    docstrings = _field_docstrings()
    for model_name, model in [("TaskMetadata", schema), *schema.get("$defs", {}).items()]:
        if model_name in UNDOCUMENTED:
            continue
        for cls in globals()[model_name].__mro__:  # a field documented where it is declared
            for field_name, text in docstrings.get(cls.__name__, {}).items():
                if field_name in model.get("properties", {}):
                    model["properties"][field_name].setdefault("description", text)
    schema["$id"] = "https://safeforge.dev/schemas/metadata.schema.json"
    schema["title"] = "Safeforge task metadata.json"
    return schema


def _field_docstrings() -> dict[str, dict[str, str]]:
    """For each class of this module, the docstring under each of its fields."""
    found: dict[str, dict[str, str]] = {}
    for node in ast.parse(Path(__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef):
            found[node.name] = {
                declared.target.id: inspect.cleandoc(after.value.value)
                for declared, after in zip(node.body, node.body[1:], strict=False)
                if isinstance(declared, ast.AnnAssign)
                and isinstance(declared.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            }
    return found


if __name__ == "__main__":
    if sys.argv[1:] != ["--schema"]:
        sys.exit("usage: python -m safeforge.task.metadata --schema")
    print(json.dumps(json_schema(), indent=2))
