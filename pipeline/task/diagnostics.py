"""`diagnose`: every problem a check found in a task, each where it belongs (file, line, the
columns of the word it is about), one list for `safeforge task check --json` and the workbench.

Text that does not read gives every read error the reader finds (it goes on after each, see
`Task.read_errors`), each at the line and column it names; a structure issue at the line it names, or at the
action (or `:init`, `:goal`) it is about; the other checks' failures belong to the task as a whole.
A check that is only a warning (`advisory`: DESPITE's rules on a task that is not generated) gives
a diagnostic of severity "warning"; every other failure is an "error".
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from safeforge.pddl.errors import PDDLError
from safeforge.task.checks import CheckReport
from safeforge.task.files import SAFETY_DOMAIN, SAFETY_PROBLEM, TaskError
from safeforge.task.folder import Task

Severity = Literal["error", "warning"]
_ACTION = re.compile(r"\baction (\S+?):? ")
_LINE = re.compile(r"\(line (\d+)\)")
_WORD = re.compile(r"\(?[^\s();]*|\)")
_FOUND = re.compile(r"\bfound (:?[^\s:;,()]+)")  # the word a reader found where another belongs
_NAMED = re.compile(r"(?:predicate|function|object|parameter|type|constant|action|requirement|section) \??([^\s:;,()]+)")


@dataclass
class Diagnostic:
    """One problem, where it is (file None: the task as a whole; columns from 1, the end excluded)."""

    check: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    end_column: int | None = None
    severity: Severity = "error"

    def to_dict(self) -> dict:
        return asdict(self)


def read_problems(task: Task) -> list[Diagnostic]:
    """Why the task's text cannot be read at all: every error the reader finds (none when it reads)."""
    if task.too_large is not None:
        return [Diagnostic("read", task.too_large, SAFETY_PROBLEM)]
    try:
        task.validator  # noqa: B018 - reads and compiles both files
    except PDDLError as exc:
        found = task.read_errors() or [exc]
        return [_placed(task, Diagnostic("read", e.message, Path(e.file).name, e.line, e.column)) for e in found]
    except TaskError as exc:
        return [Diagnostic("read", str(exc))]
    return []


def diagnose(task: Task, report: CheckReport | None = None) -> list[Diagnostic]:
    """Every problem of `task` (and of its check's `report`, when it ran), in order: the read
    errors, or each structure issue, then each failed check."""
    if problems := read_problems(task):
        return problems
    found = [_placed(task, _structure(task, issue)) for issue in task.analysis.issues]
    if report is not None:
        for result in report.results:
            if not result.ok and result.name != "structure":
                found.append(Diagnostic(result.name, result.detail, severity="warning" if result.advisory else "error"))
    return found


def _structure(task: Task, message: str) -> Diagnostic:
    """A structure issue at the line it is about: the one it names, an action's, the problem's :init or :goal."""
    if found := _LINE.search(message):
        return Diagnostic("structure", message, SAFETY_DOMAIN, int(found.group(1)))
    if (found := _ACTION.search(message + " ")) and (action := task.model.actions.get(found.group(1).lower())):
        return Diagnostic("structure", message, SAFETY_DOMAIN, action.line)
    if ":init" in message:
        return Diagnostic("structure", message, SAFETY_PROBLEM, _line_of(task.safety_problem, ":init"))
    if "goal" in message:
        return Diagnostic("structure", message, SAFETY_PROBLEM, task.model.goal_line or None)
    return Diagnostic("structure", message, SAFETY_DOMAIN)


def _placed(task: Task, diagnostic: Diagnostic) -> Diagnostic:
    """`diagnostic` with the columns of the word at its column (a '(' with the word after it), else
    of the word it names on its line, else of the line's text."""
    text = {SAFETY_DOMAIN: task.safety_domain, SAFETY_PROBLEM: task.safety_problem}.get(diagnostic.file or "")
    if text is None or diagnostic.line is None:
        return diagnostic
    lines = text.splitlines()
    if not 1 <= diagnostic.line <= len(lines):
        return diagnostic
    line = lines[diagnostic.line - 1].split(";", 1)[0]
    if diagnostic.column is not None:
        word = _WORD.match(line, diagnostic.column - 1)
        diagnostic.end_column = diagnostic.column + max(1, len(word.group()) if word else 0)
        return diagnostic
    for name in _NAMED.findall(diagnostic.message) + _FOUND.findall(diagnostic.message):
        if found := re.search(rf"(?<![\w?-]){re.escape(name)}(?![\w-])", line, re.IGNORECASE):
            diagnostic.column, diagnostic.end_column = found.start() + 1, found.end() + 1
            return diagnostic
    stripped = line.strip()
    if stripped:
        start = line.index(stripped)
        diagnostic.column, diagnostic.end_column = start + 1, start + len(stripped) + 1
    return diagnostic


def _line_of(text: str, word: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if word in line.split(";", 1)[0].lower():
            return number
    return None
