"""The task folder: safety-augmented PDDL (the source of truth), metadata, derived basic PDDL.

    safety_domain.pddl, safety_problem.pddl   written by an author or the code generator
    metadata.json                             DESPITE keys + provenance
    domain.pddl, problem.pddl                 derived: the basic problem a model is shown

Loading parses PDDL; nothing in a task is ever executed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from safeforge.common.errors import SafeforgeError
from safeforge.common.limits import CHECK_TIME_LIMIT_S
from safeforge.pddl.basic import basic_pddl
from safeforge.pddl.bounds import GroundingSize, grounding_size, too_large
from safeforge.pddl.errors import PDDLError
from safeforge.pddl.reader import PDDLTask, in_place_order, parse_file, read_all, read_task
from safeforge.pddl.sexpr import SExpr
from safeforge.planning.race import find_reference_plans
from safeforge.planning.solve import ReferencePlans
from safeforge.task.files import (
    BASIC_DOMAIN,
    BASIC_PROBLEM,
    METADATA,
    SAFETY_DOMAIN,
    SAFETY_PROBLEM,
    TaskError,
    read_metadata,
    read_task_file,
)
from safeforge.task.metadata import TaskMetadata
from safeforge.validation.simulator import Simulator
from safeforge.validation.validator import Validator

if TYPE_CHECKING:  # Unified Planning loads only where a task is checked or transformed
    import unified_planning.model as upm

    from safeforge.pddl.danger import DangerAnalysis

__all__ = ["BASIC_DOMAIN", "BASIC_PROBLEM", "METADATA", "SAFETY_DOMAIN", "SAFETY_PROBLEM", "Task", "TaskError"]


@dataclass
class Task:
    """A loaded task folder."""

    path: Path
    safety_domain: str
    safety_problem: str
    metadata: TaskMetadata = field(default_factory=TaskMetadata)

    @classmethod
    def load(cls, path: str | os.PathLike, metadata: TaskMetadata | None = None) -> Task:
        """The task folder `path`, parsed and compiled (TaskError or PDDLError when it cannot be);
        `metadata` is its `metadata_of`, when the caller has read it already."""
        folder = Path(path)
        metadata = cls.metadata_of(folder) if metadata is None else metadata
        task = cls(folder, read_task_file(folder / SAFETY_DOMAIN), read_task_file(folder / SAFETY_PROBLEM), metadata)
        if task.too_large is None:
            task.validator  # noqa: B018 - read and compile now, so a broken task fails at load time
        return task

    @staticmethod
    def metadata_of(path: str | os.PathLike) -> TaskMetadata:
        """The metadata of the task folder `path` (empty when it has no metadata.json), read without
        its PDDL; TaskError when `path` is not a folder or its metadata.json is unusable."""
        folder = Path(path)
        if not folder.is_dir():
            raise TaskError(f"{folder}: not a task folder (expected {SAFETY_DOMAIN}, {SAFETY_PROBLEM}, {METADATA})")
        return read_metadata(folder) if os.path.lexists(folder / METADATA) else TaskMetadata()

    @property
    def task_id(self) -> str:
        return self.metadata.task_id or self.path.name

    @cached_property
    def _expressions(self) -> tuple[list[SExpr], list[SExpr]] | PDDLError:
        """The s-expressions of the safety domain and problem (each file is parsed once: every
        reading of the task starts from these), or why one does not parse."""
        try:
            return parse_file(self.safety_domain, str(self.path / SAFETY_DOMAIN)), parse_file(
                self.safety_problem, str(self.path / SAFETY_PROBLEM)
            )
        except PDDLError as exc:
            return exc

    def parsed(self) -> tuple[list[SExpr], list[SExpr]]:
        """The s-expressions of the safety domain and problem; PDDLError when one does not parse."""
        if isinstance(self._expressions, PDDLError):
            raise self._expressions
        return self._expressions

    @cached_property
    def size(self) -> GroundingSize:
        """How many facts and actions the task grounds to, estimated from the text alone (0 when it
        does not parse: the reader says why)."""
        if isinstance(self._expressions, PDDLError):
            return GroundingSize(0, 0)
        return grounding_size(*self._expressions)

    @property
    def too_large(self) -> str | None:
        """Why the task is too large to parse, simulate or plan (None when it is not)."""
        return too_large(self.size)

    @cached_property
    def model(self) -> PDDLTask:
        """The safety-augmented task as our own reader reads it (fast; what scoring runs on)."""
        if self.too_large is not None:
            raise PDDLError(str(self.path / SAFETY_PROBLEM), self.too_large)
        return read_task(*self.parsed(), str(self.path / SAFETY_DOMAIN), str(self.path / SAFETY_PROBLEM))

    @cached_property
    def problem(self) -> upm.Problem:
        """The safety-augmented problem, parsed by Unified Planning (never for a task that is too
        large: Unified Planning enumerates every grounding)."""
        if self.too_large is not None:
            raise PDDLError(str(self.path / SAFETY_PROBLEM), self.too_large)
        try:
            from safeforge.pddl.up_io import parse_problem

            return parse_problem(self.safety_domain, self.safety_problem, str(self.path / SAFETY_DOMAIN), str(self.path / SAFETY_PROBLEM))
        except SafeforgeError:  # PDDLError, or the check's time limit passing in Unified Planning's parser
            raise
        except Exception as exc:  # defensive: UP may raise anything on odd input
            raise PDDLError(str(self.path / SAFETY_DOMAIN), f"{type(exc).__name__}: {exc}") from exc

    @cached_property
    def analysis(self) -> DangerAnalysis:
        from safeforge.pddl import danger

        return danger.analyse(self.model)

    @cached_property
    def validator(self) -> Validator:
        return Validator(self.model)

    def read_errors(self) -> list[PDDLError]:
        """Every error in reading the safety PDDL, where `validator` stops at the first: each syntax
        and section error (the reader goes on at the next section), and, when every declaration
        read, each undeclared or malformed name in the actions, `:init` and `:goal` that did."""
        files = str(self.path / SAFETY_DOMAIN), str(self.path / SAFETY_PROBLEM)
        reading = read_all(self.safety_domain, self.safety_problem, *files)
        if not reading.declarations_read:
            return reading.errors
        return in_place_order(reading.errors + Simulator.errors(reading.task), *files)

    def shown_pddl(self) -> tuple[str, str]:
        """(domain, problem) a model is shown: the folder's derived domain.pddl and problem.pddl (as
        DESPITE reads them; the check writes them), derived now only when they are missing. A task
        whose safety PDDL cannot be read (or is too large) has nothing to show: PDDLError."""
        self.model  # noqa: B018
        try:
            return read_task_file(self.path / BASIC_DOMAIN), read_task_file(self.path / BASIC_PROBLEM)
        except TaskError:
            if os.path.lexists(self.path / BASIC_DOMAIN) or os.path.lexists(self.path / BASIC_PROBLEM):
                raise
            return self.basic_pddl()

    def basic_pddl(self) -> tuple[str, str]:
        """(domain, problem) of the basic problem, exactly as an evaluated model sees them."""
        self.model  # noqa: B018 - the texts must read before they are rewritten
        return basic_pddl(*self.parsed())

    def reference_plans(self, engine: str | None = None, time_limit: float = CHECK_TIME_LIMIT_S) -> ReferencePlans:
        """Shortest plans from the in-process search raced against the planners (the planners alone
        when an `engine` is named); see `safeforge.planning.race`."""
        return find_reference_plans(self.validator.simulator, self.safety_domain, self.safety_problem, engine, time_limit)
