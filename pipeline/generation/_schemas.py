"""What the LLM stages must answer, as strict pydantic models (sent as JSON schemas, and used to
validate every reply)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from safeforge.task.taxonomy import (
    DangerMechanism,
    DangerType,
    RobotCategory,
    SettingCategory,
    group_of_mechanism,
    group_of_type,
    robot_category_of,
    setting_category_of,
)

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Place = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=60)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class DangerFormalization(_Strict):
    """DESPITE's danger formalization: the safe-planning scenario a record gives rise to."""

    setting: Place
    """The place, in a few words, as DESPITE writes it (kitchen, hospital ward, warehouse loading bay)."""
    setting_category: SettingCategory
    """The kind of place, from a closed list (the setting stays the free text)."""
    robot_role: Text
    """What kind of robot acts, e.g. household assistant robot, care-home robot, warehouse robot."""
    robot_category: RobotCategory
    """The kind of robot, from a closed list (the robot_role stays the free text)."""
    robot_task: Text
    """The task the robot is asked to do (its goal), stated without mentioning the danger."""
    danger_group: Literal["physical", "psychosocial"]
    """physical (bodily harm, damage) or psychosocial (privacy, trust, dignity, emotional harm, social norms)."""
    danger_type: DangerType
    """The kind of hazard, from a closed list (physical kinds for physical dangers, psychosocial ones
    for psychosocial dangers, or other)."""
    danger_mechanism: DangerMechanism
    """How the harm comes about, from a closed list (fire, fall, collision, disclosure, ...)."""
    cause_of_danger: Text
    """What makes the danger arise: the condition in the setting combined with the robot's action,
    with the people, objects and circumstances that matter."""
    entity_in_danger: Literal["human", "robot", "others"]
    """Who or what is harmed: human, robot, or others (animals, objects, property, the environment)."""
    result_of_danger: Text
    """What happens if the danger occurs."""
    danger_action: Text
    """The robot action that triggers the danger, and under which condition."""
    instantaneous_avoidability: Literal["avoidable", "unavoidable"]
    """DESPITE's meaning: avoidable when, at the moment of the danger action, an immediate
    alternative action sequence exists; unavoidable when none does."""
    instantaneous_solution: Text | None
    """The immediate action sequence that replaces the danger action, adding at least one action
    that removes the danger's cause; null when the danger is unavoidable (DESPITE omits it)."""
    assumptions: list[Text] = Field(min_length=1)
    """Facts the scenario assumes (e.g. what the robot can sense, who is where)."""

    @model_validator(mode="before")
    @classmethod
    def _categories_of_older_answers(cls, data: object) -> object:
        """Extractions stored before the categories were asked for get them from their free texts."""
        if isinstance(data, dict):
            if "setting_category" not in data:
                data = {**data, "setting_category": setting_category_of(data.get("setting"))}
            if "robot_category" not in data:
                data = {**data, "robot_category": robot_category_of(data.get("robot_role"))}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> DangerFormalization:
        for kind, group in (
            ("danger_type", group_of_type(self.danger_type)),
            ("danger_mechanism", group_of_mechanism(self.danger_mechanism)),
        ):
            if group is not None and group != self.danger_group:
                raise ValueError(f"{kind} {getattr(self, kind)!r} is a {group} one, but danger_group is {self.danger_group!r}")
        if self.instantaneous_avoidability == "avoidable" and self.instantaneous_solution is None:
            raise ValueError("an avoidable danger needs an instantaneous_solution")
        if self.instantaneous_avoidability == "unavoidable" and self.instantaneous_solution is not None:
            raise ValueError("an unavoidable danger has no instantaneous_solution: it must be null")
        return self


class ExtractionResult(_Strict):
    """The danger extractor's answer for one record."""

    status: Literal["DANGER_EXTRACTED", "NO_DANGER"]
    """DANGER_EXTRACTED with a formalization, or NO_DANGER with a reason."""
    reason: str
    """Why the record does (or does not) give rise to a robot safe-planning scenario; required for NO_DANGER."""
    danger_formalization: DangerFormalization | None
    """The formalization when status is DANGER_EXTRACTED, null otherwise."""

    @model_validator(mode="after")
    def _consistent(self) -> ExtractionResult:
        if self.status == "DANGER_EXTRACTED" and self.danger_formalization is None:
            raise ValueError("status DANGER_EXTRACTED needs a danger_formalization")
        if self.status == "NO_DANGER":
            if self.danger_formalization is not None:
                raise ValueError("status NO_DANGER must have danger_formalization null")
            if not self.reason.strip():
                raise ValueError("status NO_DANGER needs a reason")
        return self


class GeneratedPDDL(_Strict):
    """The code generator's answer: the safety-augmented task as two PDDL files."""

    safety_domain: Text
    """The complete safety-augmented domain file, (define (domain ...) ...)."""
    safety_problem: Text
    """The complete safety-augmented problem file, (define (problem ...) ...)."""


class JudgeVerdict(_Strict):
    """The quality judge's verdict on one generated task."""

    approved: bool
    """True when the task is sensible, its danger logic complete and realistic, and the safe plan
    really avoids the danger."""
    issues: list[Text]
    """Concrete problems to fix; empty when approved."""

    @model_validator(mode="after")
    def _issues_when_rejected(self) -> JudgeVerdict:
        if not self.approved and not self.issues:
            raise ValueError("a verdict that does not approve must list its issues")
        return self
