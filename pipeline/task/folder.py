"""The task folder: safety-augmented PDDL (the source of truth), metadata, derived basic PDDL.

    safety_domain.pddl, safety_problem.pddl   written by an author or the code generator
    metadata.json                             DESPITE keys + provenance
    domain.pddl, problem.pddl                 derived: the basic problem a model is shown

Loading parses PDDL; nothing in a task is ever executed.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import unified_planning.model as upm

from pipeline.common.errors import SafeforgeError
from pipeline.pddl import danger, transforms
from pipeline.pddl.up_io import PDDLError, parse_problem, write_problem
from pipeline.planning.solve import ReferencePlans, reference_plans
from pipeline.validation.validator import Validator

SAFETY_DOMAIN = "safety_domain.pddl"
SAFETY_PROBLEM = "safety_problem.pddl"
BASIC_DOMAIN = "domain.pddl"
BASIC_PROBLEM = "problem.pddl"
METADATA = "metadata.json"


class TaskError(SafeforgeError):
    """A task folder that cannot be used; the message names the file and what is wrong."""


def read_text(path: Path) -> str:
    """A task file's text; TaskError naming the file when it is missing or unreadable."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TaskError(f"{path}: file is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"{path}: cannot be read: {exc}") from None


def read_metadata(folder: Path) -> dict:
    """A task folder's metadata.json; TaskError naming the file (and line) when it is unusable."""
    path = Path(folder) / METADATA
    try:
        metadata = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise TaskError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if not isinstance(metadata, dict):
        raise TaskError(f"{path}: must hold a JSON object")
    return metadata


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers never see a half-written file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class Task:
    """A loaded task folder."""

    path: Path
    safety_domain: str
    safety_problem: str
    metadata: dict = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Task":
        folder = Path(path)
        if not folder.is_dir():
            raise TaskError(f"{folder}: not a task folder (expected {SAFETY_DOMAIN}, {SAFETY_PROBLEM}, {METADATA})")
        metadata = read_metadata(folder) if (folder / METADATA).exists() else {}
        task = cls(folder, read_text(folder / SAFETY_DOMAIN), read_text(folder / SAFETY_PROBLEM), metadata)
        task.problem  # parse now, so a broken task fails at load time
        return task

    @property
    def task_id(self) -> str:
        return str(self.metadata.get("task_id") or self.path.name)

    @cached_property
    def problem(self) -> upm.Problem:
        """The safety-augmented problem, parsed by Unified Planning."""
        try:
            return parse_problem(self.safety_domain, self.safety_problem,
                                 str(self.path / SAFETY_DOMAIN), str(self.path / SAFETY_PROBLEM))
        except PDDLError:
            raise
        except Exception as exc:  # defensive: UP may raise anything on odd input
            raise PDDLError(str(self.path / SAFETY_DOMAIN), f"{type(exc).__name__}: {exc}") from exc

    @cached_property
    def analysis(self) -> danger.DangerAnalysis:
        return danger.analyse(self.problem, self.safety_domain)

    @cached_property
    def validator(self) -> Validator:
        return Validator(self.problem)

    def basic_pddl(self) -> tuple[str, str]:
        """(domain, problem) of the basic problem, exactly as an evaluated model sees them."""
        return write_problem(transforms.basic_problem(self.problem))

    def reference_plans(self, engine: str | None = None, time_limit: float = 60.0) -> ReferencePlans:
        return reference_plans(self.safety_domain, self.safety_problem, engine, time_limit)

    def write_derived(self) -> None:
        """(Re)write domain.pddl and problem.pddl from the safety-augmented problem."""
        domain_text, problem_text = self.basic_pddl()
        write_atomically(self.path / BASIC_DOMAIN, domain_text)
        write_atomically(self.path / BASIC_PROBLEM, problem_text)

    def save_metadata(self) -> None:
        write_atomically(self.path / METADATA, json.dumps(self.metadata, indent=2, ensure_ascii=False) + "\n")
